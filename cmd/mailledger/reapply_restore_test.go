package main

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
)

// TestReapplyAfterAWholeRestoreWithTheBinary: the corpus is imported and a backup taken
// of the whole SQLite database (ledger included) and of the store; then an erasure runs
// through `mailledger serve`, which keeps its certificate bundle under the data dir's
// certificates folder. The backup is restored: the database knows nothing of the
// erasure. `mailledger erasures reapply` erases the same seven messages again from the
// kept bundle, `mailledger verify` passes, and the next purge deletes their files.
func TestReapplyAfterAWholeRestoreWithTheBinary(t *testing.T) {
	env := baseEnv(t)
	env["MAILLEDGER_BOOTSTRAP_AUDITOR"] = dpoUser + ":" + dpoPassword
	env["MAILLEDGER_PURGE_INTERVAL"] = "0"
	dataDir := env["MAILLEDGER_DATA_DIR"]
	r := runBinary(t, env, "import", archivetest.CorpusDir(t))
	require.Equal(t, 1, r.code, "one corpus file is not mail: %s", r.stderr)
	stored := countStoredFiles(t, env)

	backup := t.TempDir()
	dbFiles := database.SQLiteFiles("sqlite://" + filepath.Join(dataDir, "mailledger.db"))
	copyFiles(t, dbFiles, backup)
	require.NoError(t, os.CopyFS(filepath.Join(backup, "store"), os.DirFS(filepath.Join(dataDir, "store"))))

	s := startServe(t, env)
	s.waitFor("/readyz", http.StatusOK, 60*time.Second)
	id := eraseOverHTTP(t, s, erasedSubject)
	kept := filepath.Join(dataDir, "certificates", id+".json")
	require.Eventually(t, func() bool { _, err := os.Stat(kept); return err == nil }, 30*time.Second, 50*time.Millisecond,
		"serve keeps the bundle of the completed erasure")
	s.stop(10 * time.Second)
	assert.Contains(t, s.stderr.String(), `"msg":"erasure certificate kept"`)

	// The restore: the database files and the store as they were before the erasure.
	for _, f := range dbFiles {
		if err := os.Remove(f); !os.IsNotExist(err) {
			require.NoError(t, err)
		}
	}
	copyFiles(t, backupNames(backup, dbFiles), filepath.Dir(dbFiles[0]))
	require.NoError(t, os.RemoveAll(filepath.Join(dataDir, "store")))
	require.NoError(t, os.CopyFS(filepath.Join(dataDir, "store"), os.DirFS(filepath.Join(backup, "store"))))

	r = runBinary(t, env, "erasures", "reapply")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "reapplied erasures: 1 found something, 7 messages erased again, 0 files back for the next purge; 1 known only from their kept certificates\n", r.stdout)
	v := runBinary(t, env, "verify")
	require.Equal(t, 0, v.code, "verify: %s", v.stderr)
	p := runBinary(t, env, "purge")
	require.Equal(t, 0, p.code, "purge: %s", p.stderr)
	assert.Equal(t, "purged 7 messages, 0 held back by legal holds\n", p.stdout)
	assert.Equal(t, stored-erasedCount, countStoredFiles(t, env))
	r = runBinary(t, env, "erasures", "reapply")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "reapplied erasures: 0 found something, 0 messages erased again, 0 files back for the next purge\n", r.stdout)
}

// copyFiles copies the files of paths that exist into dir, under their base names.
func copyFiles(t *testing.T, paths []string, dir string) {
	t.Helper()
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(p)), data, 0o600))
	}
}

// backupNames are the paths in backup of the files named like paths.
func backupNames(backup string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Join(backup, filepath.Base(p))
	}
	return out
}
