package archive

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestSearchCountsUpToMaxTotal: the count stops one past MaxTotal, and the page is still
// ordered newest first by message date.
func TestSearchCountsUpToMaxTotal(t *testing.T) {
	saved := MaxTotal
	MaxTotal = 2
	defer func() { MaxTotal = saved }()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		dir := t.TempDir()
		blobs, err := NewLocalStore(filepath.Join(dir, "store"))
		require.NoError(t, err)
		keys, err := LoadOrCreateKeyring(filepath.Join(dir, "keys"))
		require.NoError(t, err)
		arc, err := New(dbtest.Open(t, d), blobs, keys, Options{})
		require.NoError(t, err)
		var batch []*Prepared
		day := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; i < 4; i++ {
			raw := archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "capped", "body", day.AddDate(0, 0, i))
			p, err := arc.Prepare(Incoming{Tenant: "default", Raw: raw})
			require.NoError(t, err)
			batch = append(batch, p)
		}
		_, err = arc.Commit(context.Background(), batch)
		require.NoError(t, err)
		msgs, total, err := arc.Search(context.Background(), Query{Tenant: "default", Text: "capped", Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, 3, total, "got total %d; want MaxTotal+1", total)
		require.Len(t, msgs, 4)
		assert.Equal(t, day.AddDate(0, 0, 3), *msgs[0].Sent, "newest message date first")
	})
}
