package main

import (
	"bytes"
	"context"
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
	signer, err := eventstore.NewSigner(store, key, "mailledger")
	require.NoError(t, err)
	certs, err := app.NewCertificates(store, signer)
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
