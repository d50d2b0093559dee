package database_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// QueryCached answers like QueryContext on every dialect, for parallel callers, after a
// write that changed the answer, and past the cache's bound.
func TestQueryCached(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db := dbtest.OpenUnmigrated(t, d)
		_, err := db.ExecContext(ctx, `CREATE TABLE cached_probe (id INTEGER PRIMARY KEY, name VARCHAR(40) NOT NULL)`)
		require.NoError(t, err)
		insert := func(id int) {
			_, err := db.ExecContext(ctx, db.Rebind(`INSERT INTO cached_probe (id, name) VALUES (?, ?)`), id, fmt.Sprintf("n%d", id))
			require.NoError(t, err)
		}
		count := func(q string, args ...any) int {
			rows, err := db.QueryCached(ctx, q, args...)
			require.NoError(t, err)
			defer rows.Close()
			n := 0
			for rows.Next() {
				n++
			}
			require.NoError(t, rows.Err())
			return n
		}
		for i := 1; i <= 10; i++ {
			insert(i)
		}
		const q = `SELECT name FROM cached_probe WHERE id <= ?`
		assert.Equal(t, 3, count(q, 3))
		assert.Equal(t, 7, count(q, 7), "same text, other arguments")
		insert(0)
		assert.Equal(t, 4, count(q, 3), "the cached statement sees rows written after it was prepared")

		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 20 {
					limit := (g+i)%10 + 1
					rows, err := db.QueryCached(ctx, q, limit)
					if !assert.NoError(t, err) {
						return
					}
					n := 0
					for rows.Next() {
						n++
					}
					assert.NoError(t, rows.Close())
					assert.Equal(t, limit+1, n)
				}
			})
		}
		wg.Wait()

		// Past the bound, distinct texts still run (unprepared).
		for i := range 80 {
			assert.Equal(t, 11, count(fmt.Sprintf(`SELECT name FROM cached_probe WHERE id >= %d - %d`, i, i)))
		}
		_, err = db.QueryCached(ctx, `SELECT nope FROM cached_probe`)
		assert.Error(t, err, "a bad query is an error, not a cached statement")
	})
}
