package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestImportKilledThenRunAgainStoresEveryMessageOnce: `import` killed with SIGKILL while
// its batches commit (two at once on MySQL) leaves only whole batches, each row with its
// file; the same import run again stores the rest, counts what the first run committed as
// duplicates, and every message then reads back byte-identical, once.
func TestImportKilledThenRunAgainStoresEveryMessageOnce(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		const n = 3000
		env := baseEnv(t)
		env["DATABASE_URL"] = dbtest.URL(t, d)
		dir := t.TempDir()
		want := map[[32]byte]bool{}
		day := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
		for i := range n {
			raw := archivetest.Message(fmt.Sprintf("s%d@x.test", i%40), []string{"r@y.test"}, nil,
				"killed import "+strconv.Itoa(i), "a body of a few words", day.Add(time.Duration(i)*time.Hour))
			want[sha256.Sum256(raw)] = true
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%05d.eml", i)), raw, 0o600))
		}
		db, err := database.Open(env["DATABASE_URL"])
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		count := func() int {
			var c int
			if err := db.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM metadata`).Scan(&c); err != nil {
				return -1 // not migrated yet
			}
			return c
		}

		cmd := exec.Command(binary, "import", dir)
		cmd.Env = envList(env)
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool { return count() >= 400 }, 2*time.Minute, 2*time.Millisecond, "two batches committed")
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		first := count()
		require.Less(t, first, n, "killed before the end")
		t.Logf("%s: %d of %d messages committed before the kill", d, first, n)

		r := runBinary(t, env, "import", dir)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, fmt.Sprintf("imported %d, duplicates %d, failed 0\n", n-first, first), r.stdout)

		blobs, err := archive.NewLocalStore(filepath.Join(env["MAILLEDGER_DATA_DIR"], "store"))
		require.NoError(t, err)
		keys, err := archive.LoadOrCreateKeyring(filepath.Join(env["MAILLEDGER_DATA_DIR"], "keys"))
		require.NoError(t, err)
		arc, err := archive.New(db, blobs, keys, archive.Options{})
		require.NoError(t, err)
		ids := dbtest.Column[int64](t, db, `SELECT id FROM metadata ORDER BY id`)
		require.Len(t, ids, n)
		got := map[[32]byte]bool{}
		for _, id := range ids {
			raw, err := arc.Raw(context.Background(), "default", id)
			require.NoError(t, err, "message %d has its file", id)
			got[sha256.Sum256(raw)] = true
		}
		assert.Equal(t, want, got, "every message once, byte-identical")
	})
}
