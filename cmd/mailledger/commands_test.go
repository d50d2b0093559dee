package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

func TestBadConfigurationExits2WithOneLine(t *testing.T) {
	garbageKey := filepath.Join(t.TempDir(), "garbage.key")
	require.NoError(t, os.WriteFile(garbageKey, []byte("not a key\n"), 0o600))
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		mention string
	}{
		{"no scheme", map[string]string{"DATABASE_URL": "nonsense"}, []string{"serve"}, "DATABASE_URL"},
		{"unknown scheme", map[string]string{"DATABASE_URL": "oracle://x"}, []string{"migrate"}, "DATABASE_URL"},
		{"bad postgres url", map[string]string{"DATABASE_URL": "postgres://u:hunter2@%zz/db"}, []string{"serve"}, "DATABASE_URL"},
		{"bad mysql dsn", map[string]string{"DATABASE_URL": "mysql://root:hunter2@tcp(x:1)"}, []string{"verify"}, "DATABASE_URL"},
		{"missing key file", map[string]string{"MAILLEDGER_LEDGER_KEY_FILE": "/nonexistent/ledger.key"}, []string{"serve"}, "ledger signing key"},
		{"garbage key file", map[string]string{"MAILLEDGER_LEDGER_KEY_FILE": garbageKey}, []string{"serve"}, "ledger signing key"},
		{"bad numbers", map[string]string{"MAILLEDGER_CHECKPOINT_EVERY": "many", "MAILLEDGER_CHECKPOINT_INTERVAL": "soon"}, []string{"serve"}, "MAILLEDGER_CHECKPOINT_INTERVAL"},
		{"bad admin", map[string]string{"MAILLEDGER_BOOTSTRAP_ADMIN": "hunter2"}, []string{"serve"}, "MAILLEDGER_BOOTSTRAP_ADMIN"},
		{"bad address", map[string]string{"HTTP_ADDR": "localhost"}, []string{"serve"}, "HTTP_ADDR"},
		{"unknown command", nil, []string{"frobnicate"}, "unknown command"},
		{"arguments to serve", nil, []string{"serve", "now"}, "takes no arguments"},
		{"projections without rebuild", nil, []string{"projections"}, "projections rebuild"},
	}
	for _, tc := range cases {
		env := baseEnv(t)
		for k, v := range tc.env {
			env[k] = v
		}
		r := runBinary(t, env, tc.args...)
		require.Equal(t, 2, r.code, "%s: stderr %s", tc.name, r.stderr)
		last := lastLine(r.stderr)
		assert.True(t, strings.HasPrefix(last, "mailledger: "), "%s: %q", tc.name, last)
		assert.Contains(t, last, tc.mention, tc.name)
		assert.NotContains(t, r.stderr, "hunter2", "%s: a secret reached stderr", tc.name)
		assert.NotContains(t, r.stderr, "goroutine ", "%s: a stack trace", tc.name)
		if !strings.Contains(tc.name, "command") && tc.args[0] != "projections" {
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "%s: one line, got %q", tc.name, r.stderr)
		}
	}
}

func TestBadNumbersAreAllReported(t *testing.T) {
	env := baseEnv(t)
	env["MAILLEDGER_CHECKPOINT_EVERY"] = "many"
	env["HTTP_ADDR"] = "nowhere"
	r := runBinary(t, env, "serve")
	require.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "MAILLEDGER_CHECKPOINT_EVERY")
	assert.Contains(t, r.stderr, "HTTP_ADDR")
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %q", r.stderr)
}

func TestUsage(t *testing.T) {
	r := runBinary(t, baseEnv(t), "help")
	require.Equal(t, 0, r.code)
	for _, cmd := range []string{"serve", "migrate", "import", "user add", "verify", "projections rebuild", "verify-certificate", "purge"} {
		assert.Contains(t, r.stdout, "  "+cmd+" ")
	}
	for _, name := range []string{"GDPR_DISTINCT_APPROVER", "PDFSERVICE_URL", "MAILLEDGER_PURGE_INTERVAL", "DIR_EXPORT",
		"EDISCOVERY_MAX_GLOBAL_EXPORTS", "EDISCOVERY_MAX_TENANT_EXPORTS", "EDISCOVERY_WORKERS", "CONSOLE_SESSION_IDLE"} {
		assert.Contains(t, r.stdout, "  "+name+" ")
	}
	r = runBinary(t, baseEnv(t))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "usage: mailledger")
}

func TestUnreachableDatabaseExits1(t *testing.T) {
	env := baseEnv(t)
	env["DATABASE_URL"] = "postgres://postgres:hunter2@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"
	for _, cmd := range []string{"migrate", "verify", "purge"} {
		r := runBinary(t, env, cmd)
		require.Equal(t, 1, r.code, "%s: %s", cmd, r.stderr)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "%s: one line, got %q", cmd, r.stderr)
		assert.Contains(t, r.stderr, "does not answer")
		assert.NotContains(t, r.stderr, "hunter2")
	}
}

func TestVerifyCommand(t *testing.T) {
	env := baseEnv(t)
	require.Equal(t, 0, runBinary(t, env, "migrate").code)
	r := runBinary(t, env, "verify")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "ledger ok: 0 events, head "+strings.Repeat("0", 64)+"\n", r.stdout)
	assert.Empty(t, r.stderr, "no progress bar when stderr is not a terminal")

	store, key := openLedger(t, env)
	appendEvents(t, store, 5)
	signer, err := eventstore.NewSigner(store, key, "mailledger")
	require.NoError(t, err)
	_, err = signer.Sign(context.Background())
	require.NoError(t, err)
	head, err := store.Head(context.Background())
	require.NoError(t, err)
	r = runBinary(t, env, "verify")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, fmt.Sprintf("ledger ok: 5 events, head %s\n", head.ChainHash), r.stdout)

	_, err = store.DB().Exec(`UPDATE events SET payload = '{"n":99}' WHERE position = 3`)
	require.NoError(t, err)
	r = runBinary(t, env, "verify")
	require.Equal(t, 1, r.code, "a changed payload fails verify: %s", r.stdout)
	assert.Contains(t, r.stderr, "position 3")
	assert.Empty(t, r.stdout)
}

func TestProjectionsRebuildCommand(t *testing.T) {
	env := baseEnv(t)
	require.Equal(t, 0, runBinary(t, env, "migrate").code)
	store, _ := openLedger(t, env)
	appendEvents(t, store, 7)
	_, err := store.DB().Exec(`DELETE FROM ledger_streams`)
	require.NoError(t, err)

	r := runBinary(t, env, "projections", "rebuild")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "projections rebuilt: 7 events replayed\n", r.stdout)
	var streams, version int64
	require.NoError(t, store.DB().QueryRow(`SELECT COUNT(*), SUM(version) FROM ledger_streams`).Scan(&streams, &version))
	assert.Equal(t, int64(3), streams, "rows of the three streams are back")
	assert.Equal(t, int64(7), version, "with every event counted")
}

// openLedger opens the store and the key of the data dir in env, as the binary does.
func openLedger(t *testing.T, env map[string]string) (*eventstore.Store, *eventstore.Key) {
	t.Helper()
	dir := env["MAILLEDGER_DATA_DIR"]
	rawURL := env["DATABASE_URL"]
	if rawURL == "" {
		rawURL = "sqlite://" + filepath.Join(dir, "mailledger.db")
	}
	db, err := database.Open(rawURL)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	store, err := eventstore.New(db, eventstore.Options{Projectors: projections.All()})
	require.NoError(t, err)
	key, err := eventstore.LoadOrCreateKey(filepath.Join(dir, "keys"), "mailledger")
	require.NoError(t, err)
	return store, key
}

func appendEvents(t *testing.T, store *eventstore.Store, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		stream := eventstore.Stream{ID: fmt.Sprintf("s-%d", i%3), Type: "test", TenantID: "t1"}
		_, err := store.Append(context.Background(), stream, eventstore.AnyVersion,
			eventstore.NewEvent{Type: "test.happened", SchemaVersion: 1, Payload: map[string]any{"n": i}})
		require.NoError(t, err)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
