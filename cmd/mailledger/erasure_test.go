package main

import (
	"encoding/json"
	"io/fs"
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

const (
	dpoUser     = "dpo"
	dpoPassword = "dpo-Passw0rd"
	// erasedSubject is a data subject of the corpus: 7 distinct messages name them.
	erasedSubject = "raasdnil@gmail.com"
	erasedCount   = 7
)

// TestErasureThenPurgeWithTheBinary runs an erasure through `mailledger serve` with the
// corpus imported, checks its bundle with `mailledger verify-certificate`, then purges
// with `mailledger purge`: the erased files are removed, the purge is in the ledger, and
// `mailledger verify` still passes.
func TestErasureThenPurgeWithTheBinary(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		env := baseEnv(t)
		if d != database.SQLite {
			env["DATABASE_URL"] = dbtest.URL(t, d)
		}
		env["MAILLEDGER_BOOTSTRAP_AUDITOR"] = dpoUser + ":" + dpoPassword
		env["MAILLEDGER_PURGE_INTERVAL"] = "0"
		r := runBinary(t, env, "import", archivetest.CorpusDir(t))
		require.Equal(t, 1, r.code, "one corpus file is not mail: %s", r.stderr)
		stored := countStoredFiles(t, env)

		s := startServe(t, env)
		s.waitFor("/readyz", http.StatusOK, 60*time.Second)
		id := eraseOverHTTP(t, s, erasedSubject)
		bundle, key := fetchBundle(t, s, id)
		fetchBundle(t, s, id) // the PDF again: still no error in the log
		s.stop(10 * time.Second)
		assert.Contains(t, s.stderr.String(), "purge schedule off")
		checkServeLog(t, s.stderr.String(), id)
		checkBundleWithTheBinary(t, bundle, key, id)
		assert.Equal(t, stored, countStoredFiles(t, env), "erased files stay until purge")

		p := runBinary(t, env, "purge")
		require.Equal(t, 0, p.code, "purge: %s", p.stderr)
		assert.Equal(t, "purged 7 messages, 0 held back by legal holds\n", p.stdout)
		assert.Equal(t, stored-erasedCount, countStoredFiles(t, env), "purge removes the erased files")
		assert.Equal(t, 1, countEvents(t, env, app.EventPurgeCompleted), "one purge event")
		v := runBinary(t, env, "verify")
		require.Equal(t, 0, v.code, "verify: %s", v.stderr)
		assert.Regexp(t, `^ledger ok: \d+ events, head [0-9a-f]{64}\n$`, v.stdout)

		p = runBinary(t, env, "purge")
		require.Equal(t, 0, p.code, "second purge: %s", p.stderr)
		assert.Equal(t, "purged 0 messages, 0 held back by legal holds\n", p.stdout)
		assert.Equal(t, 1, countEvents(t, env, app.EventPurgeCompleted), "an empty pass records nothing")
		if d == database.SQLite {
			checkPurgeSchedule(t, env)
		}
	})
}

// checkServeLog: the completion of erasure request id is logged at info, and an unset
// PDFSERVICE_URL is one warning at start, not an error per PDF asked for.
func checkServeLog(t *testing.T, log, id string) {
	t.Helper()
	assert.Contains(t, log, `"level":"INFO","msg":"erasure completed","request_id":"`+id+`"`)
	assert.Contains(t, log, `"deleted":7`)
	assert.Equal(t, 1, strings.Count(log, "PDFSERVICE_URL"), "one line names PDFSERVICE_URL:\n%s", log)
	assert.Contains(t, log, `"level":"WARN","msg":"PDFSERVICE_URL is not set`)
	assert.NotContains(t, log, "pdf_service_unavailable", "an unset PDF service is not an error per request")
}

// eraseOverHTTP creates a request for addr as the auditor, approves it as the
// administrator, executes it and waits for completed; it returns the request id.
func eraseOverHTTP(t *testing.T, s *server, addr string) string {
	t.Helper()
	status, body, _ := call(t, s, http.MethodPost, "/api/v1/admin/gdpr/requests", dpoUser, dpoPassword,
		`{"email_addresses":["`+addr+`"],"requester_name":"Mikel"}`)
	require.Equal(t, http.StatusCreated, status, "create: %s", body)
	var req struct {
		RequestID    string `json:"request_id"`
		Status       string `json:"status"`
		DeletedCount int    `json:"deleted_count"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	path := "/api/v1/admin/gdpr/requests/" + req.RequestID
	await := func(want string) {
		require.Eventually(t, func() bool {
			status, body, _ := call(t, s, http.MethodGet, path, dpoUser, dpoPassword, "")
			return status == http.StatusOK && json.Unmarshal(body, &req) == nil && req.Status == want
		}, 30*time.Second, 50*time.Millisecond, "request never reached %s (last %s)", want, req.Status)
	}
	await("pending_approval")
	status, body, _ = call(t, s, http.MethodPost, path+"/approve", dpoUser, dpoPassword, "")
	require.Equal(t, http.StatusForbidden, status, "the creator approves: %s", body)
	status, body, _ = call(t, s, http.MethodPost, path+"/approve", testAdmin, testPassword, "")
	require.Equal(t, http.StatusOK, status, "approve: %s", body)
	status, body, _ = call(t, s, http.MethodPost, path+"/execute", dpoUser, dpoPassword, "")
	require.Equal(t, http.StatusAccepted, status, "execute: %s", body)
	await("completed")
	assert.Equal(t, erasedCount, req.DeletedCount)
	return req.RequestID
}

// fetchBundle returns the certificate bundle of a completed request and the ledger's
// public key, both over HTTP.
func fetchBundle(t *testing.T, s *server, id string) ([]byte, string) {
	t.Helper()
	status, bundle, _ := call(t, s, http.MethodGet, "/api/v1/admin/gdpr/requests/"+id+"/certificate/bundle", dpoUser, dpoPassword, "")
	require.Equal(t, http.StatusOK, status, "bundle: %s", bundle)
	status, key, _ := call(t, s, http.MethodGet, "/api/v1/ledger/public-key", dpoUser, dpoPassword, "")
	require.Equal(t, http.StatusOK, status)
	status, pdf, _ := call(t, s, http.MethodGet, "/api/v1/admin/gdpr/requests/"+id+"/certificate/pdf", dpoUser, dpoPassword, "")
	assert.Equal(t, http.StatusServiceUnavailable, status, "PDFSERVICE_URL is unset: %s", pdf)
	return bundle, strings.TrimSpace(string(key))
}

// checkBundleWithTheBinary requires verify-certificate to accept the bundle and to refuse
// it with one byte of the requester's name changed.
func checkBundleWithTheBinary(t *testing.T, bundle []byte, key, id string) {
	t.Helper()
	dir := t.TempDir()
	good, bad := filepath.Join(dir, id+".json"), filepath.Join(dir, "tampered.json")
	require.NoError(t, os.WriteFile(good, bundle, 0o600))
	tampered := strings.Replace(string(bundle), `\"requester_name\":\"Mikel\"`, `\"requester_name\":\"Mikal\"`, 1)
	require.NotEqual(t, string(bundle), tampered, "the bundle names the requester")
	require.NoError(t, os.WriteFile(bad, []byte(tampered), 0o600))
	r := runBinary(t, map[string]string{}, "verify-certificate", good, "--public-key", key)
	require.Equal(t, 0, r.code, "verify-certificate: %s", r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "certificate ok: "+id+", 7 emails deleted, hash "), r.stdout)
	r = runBinary(t, map[string]string{}, "verify-certificate", bad, "--public-key", key)
	assert.Equal(t, 1, r.code, "a tampered bundle: %s", r.stdout)
	assert.Contains(t, r.stderr, "invalid certificate bundle")
}

// countStoredFiles counts the message files under the data dir's store.
func countStoredFiles(t *testing.T, env map[string]string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(env["MAILLEDGER_DATA_DIR"], "store"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".m") {
			n++
		}
		return err
	})
	require.NoError(t, err)
	return n
}

// checkPurgeSchedule starts serve with a one-second purge interval and requires a pass at
// start and another a second later, each logged with its counts.
func checkPurgeSchedule(t *testing.T, env map[string]string) {
	t.Helper()
	env["MAILLEDGER_PURGE_INTERVAL"] = "1s"
	s := startServe(t, env)
	s.waitFor("/readyz", http.StatusOK, 60*time.Second)
	require.Eventually(t, func() bool {
		return strings.Count(s.stderr.String(), `"msg":"purge pass"`) >= 2
	}, 10*time.Second, 50*time.Millisecond, "two scheduled purge passes")
	s.stop(10 * time.Second)
	assert.Contains(t, s.stderr.String(), `"msg":"purge pass","purged":0,"held_back":0`)
}
