package archive

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// archiveState is what a reindex rebuilds, read back: each message's address roles, date
// and parse note, and the answer of every query of the search table.
type archiveState struct {
	roles   map[int64][]string
	dates   map[int64]string
	notes   map[int64]string
	answers map[string][]int64
}

func readState(t *testing.T, arc *Archive, db *database.DB) archiveState {
	t.Helper()
	st := archiveState{roles: map[int64][]string{}, dates: map[int64]string{}, notes: map[int64]string{}, answers: map[string][]int64{}}
	rows, err := db.Query(`SELECT id, role, addr FROM address_role ORDER BY id, role, addr`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		var role int
		var addr string
		require.NoError(t, rows.Scan(&id, &role, &addr))
		st.roles[id] = append(st.roles[id], string(rune('0'+role))+addr)
	}
	require.NoError(t, rows.Close())
	msgs, _, err := arc.Search(context.Background(), Query{Tenant: "default", Limit: 1000})
	require.NoError(t, err)
	for _, m := range msgs {
		st.dates[m.ID] = m.Arrived.String()
		if m.Sent != nil {
			st.dates[m.ID] = m.Sent.UTC().String()
		}
		if m.ParseNote != nil {
			st.notes[m.ID] = *m.ParseNote
		}
	}
	for _, c := range searchTable {
		st.answers[c.q] = searchIDs(t, arc, Query{Tenant: "default", Text: c.q, Limit: 1000})
		slices.Sort(st.answers[c.q])
	}
	return st
}

// wipeDerived leaves the archive as an older release would have: no search terms, roles
// only from the From and To fields, no dates.
func wipeDerived(t *testing.T, arc *Archive, db *database.DB) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.InTx(ctx, func(tx *database.Tx) error {
		var ids []int64
		rows, err := tx.Query(ctx, `SELECT id FROM metadata`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		if err := arc.index.remove(ctx, tx, ids); err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM address_role WHERE role = 2`, `UPDATE metadata SET sent = NULL, msgdate = arrived, parse_note = NULL`} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}))
}

// TestReindexRebuildsWhatAFreshImportHas: after the derived rows are wiped, a reindex
// gives back exactly the roles, dates, notes and search answers of the fresh import, in
// batches smaller than the archive; a second run has nothing left to resume and does
// the same again.
func TestReindexRebuildsWhatAFreshImportHas(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		arc, db := newSearchArchive(t, d)
		loadSearchFixtures(t, arc)
		fresh := readState(t, arc, db)
		wipeDerived(t, arc, db)
		require.NotEqual(t, fresh, readState(t, arc, db), "the wipe changed what reindex rebuilds")
		var progress []int64
		res, err := arc.Reindex(context.Background(), ReindexOptions{Batch: 3, Workers: 2,
			Progress: func(done, total int64) { progress = append(progress, done, total) }})
		require.NoError(t, err)
		assert.Equal(t, int64(len(searchFixtures)), res.Messages)
		assert.Zero(t, res.Failed)
		assert.False(t, res.Resumed)
		assert.Equal(t, fresh, readState(t, arc, db))
		n := int64(len(searchFixtures))
		var want []int64
		for done := int64(3); done < n; done += 3 {
			want = append(want, done, n)
		}
		assert.Equal(t, append(want, n, n), progress, "after each batch of 3: done, total")
		var left int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM reindex_state`).Scan(&left))
		assert.Zero(t, left, "the finished run leaves no progress row")
	})
}

// TestReindexResumesAfterAnInterruption: a run stopped after its first batch goes on from
// there when started again, says so, and counts the whole run.
func TestReindexResumesAfterAnInterruption(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		arc, db := newSearchArchive(t, d)
		loadSearchFixtures(t, arc)
		fresh := readState(t, arc, db)
		wipeDerived(t, arc, db)
		ctx, cancel := context.WithCancel(context.Background())
		_, err := arc.Reindex(ctx, ReindexOptions{Batch: 3, Progress: func(int64, int64) { cancel() }})
		require.ErrorIs(t, err, context.Canceled)
		var last int64
		require.NoError(t, db.QueryRow(`SELECT last_id FROM reindex_state`).Scan(&last))
		assert.Positive(t, last, "the first batch was committed")
		var finished ReindexResult
		res, err := arc.Reindex(context.Background(), ReindexOptions{Batch: 3,
			Finish: func(_ context.Context, _ *database.Tx, r ReindexResult) error { finished = r; return nil }})
		require.NoError(t, err)
		assert.True(t, res.Resumed)
		assert.Equal(t, int64(len(searchFixtures)), res.Messages, "both runs counted")
		assert.Equal(t, res, finished, "Finish is given the run's counts")
		assert.Equal(t, fresh, readState(t, arc, db))
	})
}

// TestReindexLeavesUnreadableAndErasedMessages: a message whose file is gone is counted
// as failed and keeps its rows; an erased message is not put back into the index.
func TestReindexLeavesUnreadableAndErasedMessages(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		dir := t.TempDir()
		blobs, err := NewLocalStore(dir + "/store")
		require.NoError(t, err)
		keys, err := LoadOrCreateKeyring(dir + "/keys")
		require.NoError(t, err)
		db := dbtest.Open(t, d)
		arc, err := New(db, blobs, keys, Options{})
		require.NoError(t, err)
		ids := loadSearchFixtures(t, arc)
		require.NoError(t, blobs.Delete(context.Background(), MessageKey("default", ids["plain"])))
		require.NoError(t, db.InTx(context.Background(), func(tx *database.Tx) error { // as an erasure does
			if _, err := tx.Exec(context.Background(), `UPDATE metadata SET erased_by = 'GDPR-2026-00001' WHERE id = ?`, ids["html"]); err != nil {
				return err
			}
			return arc.RemoveFromIndex(context.Background(), tx, ids["html"])
		}))
		var failed []int64
		var mu sync.Mutex
		res, err := arc.Reindex(context.Background(), ReindexOptions{OnFailure: func(id int64, err error) {
			mu.Lock()
			defer mu.Unlock()
			failed = append(failed, id)
			assert.ErrorIs(t, err, ErrIntegrity)
		}})
		require.NoError(t, err)
		assert.Equal(t, []int64{ids["plain"]}, failed)
		assert.Equal(t, int64(1), res.Failed)
		assert.Equal(t, int64(len(searchFixtures)-2), res.Messages)
		assert.Equal(t, []int64{ids["plain"]}, searchIDs(t, arc, Query{Tenant: "default", Text: "東京"}), "the unreadable message keeps its terms")
		var n int
		require.NoError(t, db.QueryRow(db.Rebind(`SELECT COUNT(*) FROM address_role WHERE id = ?`), ids["plain"]).Scan(&n))
		assert.Positive(t, n, "and its roles")
		assert.False(t, indexedTerm(t, arc, db, ids["html"], "htmlonly"), "the erased message is not indexed again")
	})
}

// indexedTerm reports whether the index finds message id by word, visible or not.
func indexedTerm(t *testing.T, arc *Archive, db *database.DB, id int64, word string) bool {
	t.Helper()
	q, err := queryOf(word)
	require.NoError(t, err)
	cond, args := arc.index.match(q)
	var n int
	require.NoError(t, db.QueryRow(db.Rebind(`SELECT COUNT(*) FROM metadata m WHERE m.id = ? AND `+cond), append([]any{id}, args...)...).Scan(&n))
	return n > 0
}

// TestReindexWhileSearching: searches running during a reindex all succeed.
func TestReindexWhileSearching(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		arc, _ := newSearchArchive(t, d)
		var raws [][]byte
		for i := range 300 {
			raws = append(raws, archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "harbour "+string(rune('a'+i%26)), "body", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Hour)))
		}
		commitRaw(t, arc, "default", raws...)
		ctx, cancel := context.WithCancel(context.Background())
		var searches atomic.Int64
		var wg sync.WaitGroup
		first := make(chan struct{}) // the reindex starts once a search has returned
		var once sync.Once
		defer once.Do(func() { close(first) })
		wg.Go(func() {
			defer once.Do(func() { close(first) })
			for ctx.Err() == nil {
				_, total, err := arc.Search(ctx, Query{Tenant: "default", Text: "harbour", Limit: 10})
				if ctx.Err() != nil {
					return
				}
				if assert.NoError(t, err) {
					assert.Equal(t, 300, total, "every message is found before, during and after its batch")
				}
				searches.Add(1)
				once.Do(func() { close(first) })
			}
		})
		<-first
		res, err := arc.Reindex(context.Background(), ReindexOptions{Batch: 20})
		cancel()
		wg.Wait()
		require.NoError(t, err)
		assert.Equal(t, int64(300), res.Messages)
		assert.Positive(t, searches.Load())
	})
}
