package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// notMail is the one corpus file that is not an email message.
var notMail = filepath.Join("mail-gem", "sample_output_multipart")

// corpusExpectation is what importing the corpus must report: the SHA-256 of every
// distinct message and the summary line.
func corpusExpectation(t *testing.T) (map[[32]byte]bool, string) {
	t.Helper()
	files := archivetest.CorpusFiles(t)
	distinct := map[[32]byte]bool{}
	for _, p := range files {
		if strings.HasSuffix(p, string(filepath.Separator)+notMail) {
			continue
		}
		raw, err := os.ReadFile(p)
		require.NoError(t, err)
		distinct[sha256.Sum256(raw)] = true
	}
	summary := fmt.Sprintf("imported %d, duplicates %d, failed 1\n", len(distinct), len(files)-1-len(distinct))
	return distinct, summary
}

func TestImportCorpusThenReadOverHTTP(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		env := baseEnv(t)
		if d != database.SQLite {
			env["DATABASE_URL"] = dbtest.URL(t, d)
		}
		env["MAILLEDGER_BOOTSTRAP_AUDITOR"] = "dpo:dpo-Passw0rd"
		corpus := archivetest.CorpusDir(t)
		distinct, summary := corpusExpectation(t)

		r := runBinary(t, env, "import", corpus)
		require.Equal(t, 1, r.code, "one corpus file is not mail: %s", r.stderr)
		assert.Equal(t, summary, r.stdout)
		failures := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		require.Len(t, failures, 1, "exactly one failure line: %q", r.stderr)
		assert.True(t, strings.HasPrefix(failures[0], filepath.Join(corpus, notMail)+": "), "the line names the file: %q", failures[0])

		again := runBinary(t, env, "import", "--tenant", "default", filepath.Join(corpus, "piler"))
		require.Equal(t, 0, again.code, again.stderr)
		assert.Regexp(t, `^imported 0, duplicates \d+, failed 0\n$`, again.stdout)
		assert.Empty(t, again.stderr, "no progress bar when stderr is not a terminal")

		s := startServe(t, env)
		s.waitFor("/readyz", http.StatusOK, 60*time.Second)
		views := readEveryMessage(t, s, distinct)
		checkHoldLifecycle(t, s)
		s.stop(10 * time.Second)

		assert.Equal(t, views, countEvents(t, env, app.EventMessageViewed), "every view is in the ledger")
		verified := runBinary(t, env, "verify")
		require.Equal(t, 0, verified.code, verified.stderr)
		assert.Regexp(t, `^ledger ok: \d+ events, head [0-9a-f]{64}\n$`, verified.stdout)
	})
}

type listAnswer struct {
	Messages []struct {
		ID      int64  `json:"id"`
		From    string `json:"from"`
		Subject string `json:"subject"`
	} `json:"messages"`
	Total int `json:"total"`
}

// readEveryMessage lists the archive as the auditor and reads each message back raw,
// requiring the set of SHA-256 digests to be the corpus's; it returns the views made.
func readEveryMessage(t *testing.T, s *server, distinct map[[32]byte]bool) int {
	t.Helper()
	status, body, _ := call(t, s, http.MethodGet, "/api/v1/messages?limit=500", "dpo", "dpo-Passw0rd", "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	var list listAnswer
	require.NoError(t, json.Unmarshal(body, &list))
	require.Equal(t, len(distinct), list.Total)
	require.Len(t, list.Messages, list.Total)
	got := map[[32]byte]bool{}
	views := 0
	for i, m := range list.Messages {
		status, raw, header := call(t, s, http.MethodGet, fmt.Sprintf("/api/v1/messages/%d/raw", m.ID), "dpo", "dpo-Passw0rd", "")
		require.Equal(t, http.StatusOK, status, "raw %d: %s", m.ID, raw)
		assert.Equal(t, "message/rfc822", header.Get("Content-Type"))
		got[sha256.Sum256(raw)] = true
		views++
		if i%20 == 0 {
			status, text, header := call(t, s, http.MethodGet, fmt.Sprintf("/api/v1/messages/%d/text", m.ID), "dpo", "dpo-Passw0rd", "")
			require.Equal(t, http.StatusOK, status, "text %d: %s", m.ID, text)
			assert.Equal(t, "text/plain; charset=utf-8", header.Get("Content-Type"))
			status, meta, _ := call(t, s, http.MethodGet, fmt.Sprintf("/api/v1/messages/%d", m.ID), "dpo", "dpo-Passw0rd", "")
			require.Equal(t, http.StatusOK, status)
			assert.Contains(t, string(meta), fmt.Sprintf(`"id":%d`, m.ID))
			views += 2
		}
	}
	assert.Equal(t, distinct, got, "every stored message reads back byte-identical")
	return views
}

// checkHoldLifecycle places and releases a hold as the bootstrap admin.
func checkHoldLifecycle(t *testing.T, s *server) {
	t.Helper()
	status, body, header := call(t, s, http.MethodPost, "/api/v1/admin/legal-holds", testAdmin, testPassword,
		`{"type":"address","value":"custodian@example.test","reason":"litigation hold","matter":"M-1"}`)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	location := header.Get("Location")
	require.True(t, strings.HasPrefix(location, "/api/v1/admin/legal-holds/LH-"), location)
	status, body, _ = call(t, s, http.MethodGet, location, "dpo", "dpo-Passw0rd", "")
	require.Equal(t, http.StatusOK, status, "the auditor of the tenant sees it: %s", body)
	status, body, _ = call(t, s, http.MethodPost, location+"/release", "dpo", "dpo-Passw0rd", "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.Contains(t, string(body), `"status":"released"`)
	status, body, _ = call(t, s, http.MethodPost, location+"/release", testAdmin, testPassword, "")
	require.Equal(t, http.StatusConflict, status, "%s", body)
	assert.Contains(t, string(body), `"code":"invalid_transition"`)
}

// countEvents counts the ledger's events of type in the database of env.
func countEvents(t *testing.T, env map[string]string, eventType string) int {
	t.Helper()
	store, _ := openLedger(t, env)
	db := store.DB()
	var n int
	err := db.QueryRowContext(context.Background(), db.Rebind(`SELECT COUNT(*) FROM events WHERE event_type = ?`), eventType).Scan(&n)
	require.NoError(t, err)
	return n
}

func TestImportRejectsBadArguments(t *testing.T) {
	env := baseEnv(t)
	dir := t.TempDir()
	cases := []struct {
		args    []string
		mention string
	}{
		{[]string{"import"}, "usage: mailledger import"},
		{[]string{"import", "--tenant", "acme"}, "usage: mailledger import"},
		{[]string{"import", filepath.Join(dir, "missing")}, "no such file or directory"},
		{[]string{"import", "--tenant", "../up", dir}, "--tenant"},
		{[]string{"import", "--tenant", "", dir}, "--tenant"},
		{[]string{"import", "--tenant", "a/b", dir}, "--tenant"},
		{[]string{"import", "--flavour", "x", dir}, "flag provided but not defined"},
	}
	for _, tc := range cases {
		r := runBinary(t, env, tc.args...)
		require.Equal(t, 2, r.code, "%v: %s", tc.args, r.stderr)
		assert.Contains(t, lastLine(r.stderr), tc.mention, "%v", tc.args)
		assert.Empty(t, r.stdout, "%v: no summary for bad arguments", tc.args)
	}
}

func TestImportIntoATenant(t *testing.T) {
	env := baseEnv(t)
	dir := t.TempDir()
	sent := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	for i := range 3 {
		raw := archivetest.Message(fmt.Sprintf("s%d@acme.test", i), []string{"r@acme.test"}, nil, "hello", "body", sent.Add(time.Duration(i)*time.Minute))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.eml", i)), raw, 0o600))
	}
	r := runBinary(t, env, "import", dir, "--tenant", "acme.test")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "imported 3, duplicates 0, failed 0\n", r.stdout)
	r = runBinary(t, env, "import", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "imported 3, duplicates 0, failed 0\n", r.stdout, "duplicates count per tenant")
	store, _ := openLedger(t, env)
	var acme, def int
	require.NoError(t, store.DB().QueryRow(`SELECT COUNT(*) FROM metadata WHERE tenant_id = 'acme.test'`).Scan(&acme))
	require.NoError(t, store.DB().QueryRow(`SELECT COUNT(*) FROM metadata WHERE tenant_id = 'default'`).Scan(&def))
	assert.Equal(t, [2]int{3, 3}, [2]int{acme, def})
	entries, err := os.ReadDir(filepath.Join(env["MAILLEDGER_DATA_DIR"], "store"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"acme.test", "default"}, names, "files under $MAILLEDGER_DATA_DIR/store/<tenant>")
}

// TestImportSaysEmptyFile: an empty file, as a message or as an mbox, is reported as
// "empty file", not as something that is not mail.
func TestImportSaysEmptyFile(t *testing.T) {
	env := baseEnv(t)
	dir := t.TempDir()
	for _, name := range []string{"empty.eml", "empty.mbox"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	r := runBinary(t, env, "import", dir)
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Equal(t, "imported 0, duplicates 0, failed 2\n", r.stdout)
	for _, name := range []string{"empty.eml", "empty.mbox"} {
		assert.Contains(t, r.stderr, filepath.Join(dir, name)+": empty file\n")
	}
}
