package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

// certificateBundle writes the bundle of a completed request (its events appended
// directly to a fresh ledger) and returns its path, the ledger's key and the hash.
func certificateBundle(t *testing.T) (string, *eventstore.Key, string) {
	t.Helper()
	return certificateBundleOf(t, "mailledger")
}

// certificateBundleOf is certificateBundle with checkpoints of the given origin, signed
// by a key named "mailledger".
func certificateBundleOf(t *testing.T, origin string) (string, *eventstore.Key, string) {
	t.Helper()
	ctx := context.Background()
	store, err := eventstore.New(dbtest.Open(t, database.SQLite), eventstore.Options{Projectors: projections.All()})
	require.NoError(t, err)
	const id = "GDPR-2026-00001"
	c := erasure.Counts{EmailsAsSender: 3, EmailsAsRecipient: 2, AffectedEmails: 4}
	events := []domain.Event{
		&erasure.Created{RequestID: id, TenantID: "acme", EmailAddresses: []string{"a@x.test"}, CreatedBy: "auditor"},
		&erasure.AssessmentStarted{RequestID: id, StartedBy: "system"},
		&erasure.AssessmentCompleted{RequestID: id, Counts: c},
		&erasure.Approved{RequestID: id, ApprovedBy: "dpo"},
		&erasure.ExecutionStarted{RequestID: id, StartedBy: "dpo"},
		&erasure.ExecutionCompleted{RequestID: id, DeletedCount: 4},
	}
	stream := eventstore.Stream{ID: erasure.StreamID(id), Type: erasure.StreamType, TenantID: "acme"}
	for i, ev := range events {
		_, err := store.Append(ctx, stream, int64(i), eventstore.FromDomain(ev, domain.Metadata{Actor: "test"}))
		require.NoError(t, err)
	}
	key, err := eventstore.LoadOrCreateKey(t.TempDir(), "mailledger")
	require.NoError(t, err)
	signer, err := eventstore.NewSigner(store, key, origin)
	require.NoError(t, err)
	certs, err := app.NewCertificates(store, signer, app.CertificatesConfig{})
	require.NoError(t, err)
	b, err := certs.Bundle(ctx, "acme", id)
	require.NoError(t, err)
	data, err := b.JSON()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), id+".bundle.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path, key, b.Certificate.Hash
}

// TestVerifyCertificateCommand checks the exit codes and output of verify-certificate:
// 0 for a good bundle (key as text or as a file), 1 for a tampered or unreadable one or
// the wrong key, 2 for usage errors.
func TestVerifyCertificateCommand(t *testing.T) {
	path, key, hash := certificateBundle(t)
	keyFile := filepath.Join(t.TempDir(), "ledger.pub")
	require.NoError(t, os.WriteFile(keyFile, []byte(key.PublicKey+"\n"), 0o644))
	other, err := eventstore.LoadOrCreateKey(t.TempDir(), "mailledger")
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	tampered := filepath.Join(t.TempDir(), "tampered.json")
	require.NoError(t, os.WriteFile(tampered, bytes.Replace(data, []byte(`deleted_count\":4`), []byte(`deleted_count\":5`), 1), 0o644))
	notJSON := filepath.Join(t.TempDir(), "garbage.json")
	require.NoError(t, os.WriteFile(notJSON, []byte("not json"), 0o644))

	ok := "certificate ok: GDPR-2026-00001, 4 emails deleted, hash " + hash + "\n"
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"key text", []string{path, "--public-key", key.PublicKey}, 0, ok, ""},
		{"key file, flag first", []string{"--public-key=" + keyFile, path}, 0, ok, ""},
		{"single dash flag", []string{path, "-public-key", keyFile}, 0, ok, ""},
		{"changed body", []string{tampered, "--public-key", keyFile}, 1, "", "certificate: hash"},
		{"wrong key", []string{path, "--public-key", other.PublicKey}, 1, "", "checkpoint: does not verify with the public key"},
		{"not a bundle", []string{notJSON, "--public-key", keyFile}, 1, "", "not a bundle"},
		{"missing file", []string{path + ".missing", "--public-key", keyFile}, 1, "", "no such file"},
		{"no key", []string{path}, 2, "", "--public-key is required"},
		{"no file", []string{"--public-key", keyFile}, 2, "", "want one bundle file, got 0"},
		{"two files", []string{path, path, "--public-key", keyFile}, 2, "", "want one bundle file, got 2"},
		{"key without value", []string{path, "--public-key"}, 2, "", "--public-key needs a value"},
		{"unknown flag", []string{path, "--public-key", keyFile, "--fast"}, 2, "", "unknown flag --fast"},
		{"bad key", []string{path, "--public-key", "not-a-key"}, 2, "", "neither a signed-note verifier key nor a readable file"},
		{"key file without a key", []string{path, "--public-key", notJSON}, 2, "", "holds no signed-note verifier key"},
		{"help", []string{"--help"}, 0, "usage: mailledger verify-certificate", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := verifyCertificateCommand(c.args, &stdout, &stderr)
			assert.Equal(t, c.code, code, "exit code; stderr %s", stderr.String())
			if c.code == 0 {
				assert.Contains(t, stdout.String(), c.stdout)
				assert.Empty(t, stderr.String())
				return
			}
			assert.Empty(t, stdout.String())
			assert.Contains(t, stderr.String(), c.stderr)
		})
	}
}

// TestVerifyCertificateChecksTheOrigin: the checkpoint's origin line must be the ledger's
// origin, the public key's name unless --origin names another; a checkpoint of another
// log signed with the same key is refused.
func TestVerifyCertificateChecksTheOrigin(t *testing.T) {
	path, key, _ := certificateBundleOf(t, "acme-ledger")
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"key name differs", []string{path, "--public-key", key.PublicKey}, 1,
			`checkpoint: its origin is "acme-ledger", but the ledger's origin is "mailledger" (the public key's name; give --origin when the ledger's origin differs)`},
		{"origin given", []string{path, "--public-key", key.PublicKey, "--origin", "acme-ledger"}, 0, ""},
		{"origin given with =", []string{path, "--public-key", key.PublicKey, "--origin=acme-ledger"}, 0, ""},
		{"other origin given", []string{path, "--public-key", key.PublicKey, "--origin", "mailledger"}, 1,
			`checkpoint: its origin is "acme-ledger", but the ledger's origin is "mailledger" (--origin)`},
		{"origin without value", []string{path, "--public-key", key.PublicKey, "--origin"}, 2, "--origin needs a value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := verifyCertificateCommand(c.args, &stdout, &stderr)
			assert.Equal(t, c.code, code, "exit code; stderr %s", stderr.String())
			assert.Contains(t, stderr.String(), c.stderr)
		})
	}
}

// TestVerifyCertificateErrorsAreSentences: what verify-certificate says about a broken
// bundle is one sentence that names JSON members, never Go types, and gives hashes in
// hex, never as Go byte slices.
func TestVerifyCertificateErrorsAreSentences(t *testing.T) {
	path, key, _ := certificateBundle(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var b map[string]any
	require.NoError(t, json.Unmarshal(data, &b))
	event := func(b map[string]any) map[string]any { return b["events"].([]any)[0].(map[string]any) }
	otherHash := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xab}, 32))
	cases := []struct {
		name   string
		change func(b map[string]any)
		raw    []byte
		want   string
	}{
		{"empty file", nil, []byte{}, "empty file"},
		{"blank file", nil, []byte(" \n"), "empty file"},
		{"not JSON", nil, []byte("{\"format\": "), "not a bundle: not JSON: unexpected end of the file"},
		{"unknown member", func(b map[string]any) { b["signature"] = "x" }, nil, `not a bundle: unknown member "signature"`},
		{"unknown member of an event", func(b map[string]any) { event(b)["note"] = "x" }, nil,
			`not a bundle: unknown member "note" in /events/0`},
		{"wrong type", func(b map[string]any) { b["events"] = "all of them" }, nil,
			"not a bundle: /events is a string; want an array"},
		{"other proof hash", func(b map[string]any) { event(b)["inclusion_proof"].([]any)[0] = otherHash }, nil,
			"inclusion proof leads to the root "},
		{"short proof", func(b map[string]any) {
			event(b)["inclusion_proof"] = event(b)["inclusion_proof"].([]any)[1:]
		}, nil, "inclusion proof has 2 hashes; a leaf at index 0 of a tree of size 6 needs 3"},
		{"changed checkpoint", func(b map[string]any) {
			b["checkpoint"] = strings.Replace(b["checkpoint"].(string), "\n6\n", "\n0\n", 1)
		}, nil, "checkpoint: does not verify with the public key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := c.raw
			if c.change != nil {
				var m map[string]any
				require.NoError(t, json.Unmarshal(data, &m))
				c.change(m)
				raw, err = json.Marshal(m)
				require.NoError(t, err)
			}
			file := filepath.Join(t.TempDir(), "bundle.json")
			require.NoError(t, os.WriteFile(file, raw, 0o644))
			var stdout, stderr strings.Builder
			code := verifyCertificateCommand([]string{file, "--public-key", key.PublicKey}, &stdout, &stderr)
			assert.Equal(t, 1, code, "stderr %s", stderr.String())
			got := stderr.String()
			assert.Contains(t, got, c.want)
			assert.Equal(t, 1, strings.Count(got, "\n"), "one line: %q", got)
			assert.NotRegexp(t, `\[[0-9]+ [0-9]+`, got, "a Go byte slice")
			assert.NotContains(t, got, "Go ", "a Go type")
			assert.NotContains(t, got, "certificate.", "a Go type")
			if c.name == "other proof hash" {
				assert.Regexp(t, `root [0-9a-f]{64}, not the checkpoint's root [0-9a-f]{64}`, got)
			}
		})
	}
}
