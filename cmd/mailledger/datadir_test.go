package main

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFreshDataDirIsPrivate: migrate, import and serve on a data dir that does not exist
// yet leave every directory under it 0700 and every file 0600 (the public key aside).
func TestFreshDataDirIsPrivate(t *testing.T) {
	env := baseEnv(t)
	dataDir := filepath.Join(env["MAILLEDGER_DATA_DIR"], "fresh")
	env["MAILLEDGER_DATA_DIR"] = dataDir
	r := runBinary(t, env, "migrate")
	require.Equal(t, 0, r.code, r.stderr)
	requirePrivate(t, dataDir)
	mail := filepath.Join(t.TempDir(), "one.eml")
	require.NoError(t, os.WriteFile(mail, []byte("From: a@example.com\r\nTo: b@example.com\r\nSubject: hi\r\nMessage-ID: <1@x>\r\n\r\nbody\r\n"), 0o644))
	r = runBinary(t, env, "import", mail)
	require.Equal(t, 0, r.code, r.stderr)
	s := startServe(t, env)
	s.waitFor("/readyz", http.StatusOK, 60*time.Second)
	requirePrivate(t, dataDir) // the -wal and -shm files exist while serve runs
	for _, p := range []string{"mailledger.db", "mailledger.db-wal", "mailledger.db-shm", "keys/ledger.key"} {
		assert.FileExists(t, filepath.Join(dataDir, p), "checked %s", p)
	}
	s.stop(10 * time.Second)
}

// TestExistingDataDirIsTightened: a data dir left 0755 with a 0644 database is made 0700
// and 0600 at the next start, with a log line naming each path.
func TestExistingDataDirIsTightened(t *testing.T) {
	env := baseEnv(t)
	dataDir := filepath.Join(env["MAILLEDGER_DATA_DIR"], "old")
	env["MAILLEDGER_DATA_DIR"] = dataDir
	mail := filepath.Join(t.TempDir(), "one.eml")
	require.NoError(t, os.WriteFile(mail, []byte("From: a@example.com\r\nSubject: hi\r\n\r\nbody\r\n"), 0o644))
	r := runBinary(t, env, "import", mail)
	require.Equal(t, 0, r.code, r.stderr)
	archiveKeys, err := filepath.Glob(filepath.Join(dataDir, "keys", "archive-*.key"))
	require.NoError(t, err)
	require.Len(t, archiveKeys, 1, "import creates the archive's key")
	loosen := map[string]os.FileMode{dataDir: 0o755, filepath.Join(dataDir, "mailledger.db"): 0o644,
		filepath.Join(dataDir, "keys"): 0o755, archiveKeys[0]: 0o644, filepath.Join(dataDir, "store"): 0o755}
	for p, mode := range loosen {
		require.NoError(t, os.Chmod(p, mode))
	}
	r = runBinary(t, env, "migrate")
	require.Equal(t, 0, r.code, r.stderr)
	requirePrivate(t, dataDir)
	for p := range loosen {
		assert.Contains(t, r.stderr, `"path":"`+p+`"`, "a log line names %s", p)
	}
	assert.Contains(t, r.stderr, "tightened permissions")
}

// requirePrivate checks that no directory or file under dir, dir included, is open to the
// group or others; keys/ledger.pub is public by design.
func requirePrivate(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a temporary file renamed while the walk ran (serve writes its TLS key so)
		}
		require.NoError(t, err)
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		require.NoError(t, err)
		want := os.FileMode(0o600)
		switch {
		case d.IsDir():
			want = 0o700
		case filepath.Base(p) == "ledger.pub":
			return nil
		}
		assert.Equal(t, want, info.Mode().Perm(), "mode of %s: got %o; want %o", p, info.Mode().Perm(), want)
		return nil
	})
	require.NoError(t, err)
}
