package archive

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// newSearchArchive returns an archive on a fresh database of dialect d.
func newSearchArchive(t *testing.T, d database.Dialect) (*Archive, *database.DB) {
	t.Helper()
	dir := t.TempDir()
	blobs, err := NewLocalStore(filepath.Join(dir, "store"))
	require.NoError(t, err)
	keys, err := LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	require.NoError(t, err)
	db := dbtest.Open(t, d)
	arc, err := New(db, blobs, keys, Options{})
	require.NoError(t, err)
	return arc, db
}

func commitRaw(t *testing.T, arc *Archive, tenant string, raws ...[]byte) []Result {
	t.Helper()
	var batch []*Prepared
	for _, raw := range raws {
		p, err := arc.Prepare(Incoming{Tenant: tenant, Raw: raw})
		require.NoError(t, err)
		batch = append(batch, p)
	}
	res, err := arc.Commit(context.Background(), batch)
	require.NoError(t, err)
	return res
}

// searchIDs runs q and returns the ids of the page, checking that the count agrees.
func searchIDs(t *testing.T, arc *Archive, q Query) []int64 {
	t.Helper()
	msgs, total, err := arc.Search(context.Background(), q)
	require.NoError(t, err, "%+v", q)
	ids := []int64{}
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	assert.Equal(t, len(ids), total, "count of %+v", q)
	return ids
}

// TestSearchAfterRemoveFromIndex: a message taken out of the index (erasure, purge) is no
// longer found by its words, and the others still are.
func TestSearchAfterRemoveFromIndex(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		arc, db := newSearchArchive(t, d)
		day := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
		res := commitRaw(t, arc, "default",
			archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "harbour plans", "first draft", day),
			archivetest.Message("c@x.test", []string{"b@y.test"}, nil, "harbour budget", "second draft", day.AddDate(0, 0, 1)),
		)
		require.ElementsMatch(t, []int64{res[0].ID, res[1].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: "harbour"}))
		require.NoError(t, db.InTx(context.Background(), func(tx *database.Tx) error {
			return arc.RemoveFromIndex(context.Background(), tx, res[0].ID)
		}))
		assert.Equal(t, []int64{}, searchIDs(t, arc, Query{Tenant: "default", Text: "plans"}))
		assert.Equal(t, []int64{res[1].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: "harbour draft"}))
	})
}

// TestIndexChunks: a commit whose terms exceed one INSERT's rows and bytes is indexed
// whole, and each message's last term is found.
func TestIndexChunks(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		arc, db := newSearchArchive(t, d)
		// 900 distinct words of 120 bytes a message, six messages: 5,400 words, past
		// termChunk rows and (with their pairs) termChunkBytes and indexChunkBytes.
		const perMessage, messages = 900, 6
		word := func(m, i int) string { return fmt.Sprintf("%s%dx%04d", strings.Repeat("w", 110), m, i) }
		var raws [][]byte
		for m := range messages {
			var body strings.Builder
			for i := range perMessage {
				body.WriteString(word(m, i))
				body.WriteString("\r\n")
			}
			raws = append(raws, archivetest.Message("a@x.test", []string{"b@y.test"}, nil, fmt.Sprintf("chunk %d", m), body.String(), time.Date(2026, 1, 1+m, 0, 0, 0, 0, time.UTC)))
		}
		require.Greater(t, messages*perMessage, termChunk)
		require.Greater(t, messages*perMessage*2*len(word(0, 0)), termChunkBytes)
		res := commitRaw(t, arc, "default", raws...)
		for m, r := range res {
			assert.Equal(t, []int64{r.ID}, searchIDs(t, arc, Query{Tenant: "default", Text: word(m, perMessage-1)}), "last word of message %d", m)
			assert.Equal(t, []int64{r.ID}, searchIDs(t, arc, Query{Tenant: "default", Text: word(m, 0) + " " + word(m, 1)}), "first words of message %d", m)
		}
		if d == database.MySQL {
			var n int
			require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM search_term WHERE id = ?`, res[0].ID).Scan(&n))
			assert.GreaterOrEqual(t, n, 2*perMessage-1, "words and pairs of message 1")
		}
	})
}
