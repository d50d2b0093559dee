package database_test

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
)

// On SQLite, InTx writes through a connection of its own with the large page cache, and
// reads go through the readers' pool with small caches: the memory of every cache
// together stays bounded (docs/performance.md, "SQLite's page caches"); every connection
// maps the database file into memory. Writers in
// parallel with readers lose nothing, and a reader sees every committed write.
func TestSQLiteWriterAndReaderPools(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open("sqlite://" + filepath.Join(t.TempDir(), "pools.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })

	var readerCache int
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&readerCache))
	var writerCache int
	require.NoError(t, db.InTx(ctx, func(tx *database.Tx) error {
		return tx.QueryRow(ctx, `PRAGMA cache_size`).Scan(&writerCache)
	}))
	assert.Equal(t, -8192, readerCache, "a reader's page cache, in KiB (negative)")
	assert.Equal(t, -65536, writerCache, "the writer's page cache, in KiB (negative)")
	var readerMmap, writerMmap int64
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&readerMmap))
	require.NoError(t, db.InTx(ctx, func(tx *database.Tx) error {
		return tx.QueryRow(ctx, `PRAGMA mmap_size`).Scan(&writerMmap)
	}))
	// 2 GiB asked for, capped by SQLite at its SQLITE_MAX_MMAP_SIZE (2 GB less 64 KiB)
	assert.Equal(t, int64(2147418112), readerMmap, "a reader maps the database file")
	assert.Equal(t, int64(2147418112), writerMmap, "the writer maps the database file")
	// two readers a processor, at least 4 (docs/performance.md, "SQLite: fewer readers")
	assert.Equal(t, max(4, 2*runtime.GOMAXPROCS(0)), db.Stats().MaxOpenConnections, "the readers' pool")

	_, err = db.ExecContext(ctx, `CREATE TABLE pool_probe (id INTEGER PRIMARY KEY, w INTEGER NOT NULL)`)
	require.NoError(t, err)
	const writers, rows = 4, 50
	var wg, readers sync.WaitGroup
	var written atomic.Bool
	for w := range writers {
		wg.Go(func() {
			for i := range rows {
				err := db.InTx(ctx, func(tx *database.Tx) error {
					_, err := tx.Exec(ctx, `INSERT INTO pool_probe (id, w) VALUES (?, ?)`, w*rows+i, w)
					return err
				})
				if !assert.NoError(t, err) {
					return
				}
			}
		})
	}
	for range 4 {
		readers.Go(func() {
			last := 0
			for !written.Load() {
				var n int
				if !assert.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pool_probe`).Scan(&n)) {
					return
				}
				assert.GreaterOrEqual(t, n, last, "a reader never sees fewer rows than before")
				last = n
			}
		})
	}
	wg.Wait()
	written.Store(true)
	readers.Wait()
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pool_probe`).Scan(&n))
	assert.Equal(t, writers*rows, n)
}
