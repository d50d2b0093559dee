package archive_test

import (
	"context"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

var erasurePool = []string{
	"alice@alpha.test", "bob@alpha.test", "carol@beta.test", "dave@beta.test",
	"erin@gamma.test", "frank@gamma.test", "grace@delta.test",
}

// storeMail archives generated mail in tenant and returns the ids, in order.
func (f *fixture) storeMail(t *testing.T, tenant string, mails []archivetest.Mail) []int64 {
	t.Helper()
	var batch []*archive.Prepared
	for i, m := range mails {
		p, err := f.arc.Prepare(archive.Incoming{Tenant: tenant, Raw: m.Raw, Envelope: m.Envelope, Source: "gen" + string(rune('a'+i%26))})
		require.NoError(t, err)
		batch = append(batch, p)
	}
	res, err := f.arc.Commit(context.Background(), batch)
	require.NoError(t, err)
	ids := make([]int64, len(res))
	for i, r := range res {
		require.False(t, r.Duplicate, "generated message %d is a duplicate", i)
		ids[i] = r.ID
	}
	return ids
}

// hold is a legal_holds row written directly: the archive reads the table, whoever writes it.
type hold struct{ id, typ, value, status string }

func (f *fixture) placeHolds(t *testing.T, tenant string, holds ...hold) {
	t.Helper()
	for _, h := range holds {
		_, err := f.db.Exec(f.db.Rebind(`INSERT INTO legal_holds (id, tenant_id, type, value, reason, matter, status, created_by, created_at) VALUES (?, ?, ?, ?, 'test', '', ?, 'test', ?)`),
			h.id, tenant, h.typ, h.value, h.status, database.TimeArg(f.db.Dialect, time.Now()))
		require.NoError(t, err)
	}
}

// wantScope counts the scope from the generator's knowledge of the messages.
func wantScope(mails []archivetest.Mail, addrs []string) archive.Scope {
	var s archive.Scope
	for _, m := range mails {
		sends, receives := false, false
		for _, a := range addrs {
			sends = sends || m.Sends(a)
			receives = receives || m.Receives(a)
		}
		if sends {
			s.AsSender++
		}
		if receives {
			s.AsRecipient++
		}
		if sends || receives {
			s.Affected++
			s.Attachments += m.Attachments
		}
	}
	return s
}

// heldBy reports whether a hold (active or not) covers m.
func heldBy(m archivetest.Mail, h hold) bool {
	for _, p := range m.Participants() {
		if h.typ == "address" && p == h.value || h.typ == "domain" && strings.HasSuffix(p, "@"+h.value) {
			return true
		}
	}
	return false
}

func TestErasure(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		t.Run("scope counts", func(t *testing.T) { testScope(t, d) })
		t.Run("blocking holds", func(t *testing.T) { testBlockingHolds(t, d) })
		t.Run("erase and purge", func(t *testing.T) { testEraseAndPurge(t, d) })
	})
}

func testScope(t *testing.T, d database.Dialect) {
	f := newFixture(t, d)
	ctx := context.Background()
	mails := archivetest.GenerateMail(rand.New(rand.NewSource(7)), 120, erasurePool, time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC))
	f.storeMail(t, "acme", mails)
	f.storeMail(t, "globex", mails[:40])
	for _, addrs := range [][]string{{"alice@alpha.test"}, {"carol@beta.test", "grace@delta.test"}, erasurePool, {"nobody@nowhere.test"}} {
		got, err := f.arc.Scope(ctx, "acme", addrs)
		require.NoError(t, err)
		assert.Equal(t, wantScope(mails, addrs), got, "scope of %v", addrs)
	}
	got, err := f.arc.Scope(ctx, "acme", []string{" Alice@ALPHA.test "})
	require.NoError(t, err)
	assert.Equal(t, wantScope(mails, []string{"alice@alpha.test"}), got, "addresses are normalised")
	got, err = f.arc.Scope(ctx, "globex", []string{"alice@alpha.test"})
	require.NoError(t, err)
	assert.Equal(t, wantScope(mails[:40], []string{"alice@alpha.test"}), got, "another tenant's scope")
}

func testBlockingHolds(t *testing.T, d database.Dialect) {
	f := newFixture(t, d)
	ctx := context.Background()
	day := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	f.store(t, "acme",
		archivetest.Message("subject@alpha.test", []string{"witness@beta.test"}, nil, "one", "b", day),
		archivetest.Message("other@gamma.test", []string{"third@delta.test"}, nil, "two", "b", day.Add(time.Hour)),
	)
	f.placeHolds(t, "acme",
		hold{"LH-1", "address", "third@delta.test", "active"},    // not a participant of subject's mail
		hold{"LH-2", "address", "witness@beta.test", "released"}, // released
		hold{"LH-3", "domain", "gamma.test", "active"},           // not a participant either
	)
	f.placeHolds(t, "globex", hold{"LH-4", "address", "subject@alpha.test", "active"}) // another tenant
	holds, reason, err := f.arc.BlockingHolds(ctx, "acme", []string{"subject@alpha.test"})
	require.NoError(t, err)
	assert.Empty(t, holds, "no active hold covers the subject's mail")
	assert.Empty(t, reason)

	f.placeHolds(t, "acme", hold{"LH-5", "address", "witness@beta.test", "active"}, hold{"LH-6", "domain", "alpha.test", "active"})
	holds, reason, err = f.arc.BlockingHolds(ctx, "acme", []string{"subject@alpha.test"})
	require.NoError(t, err)
	assert.Equal(t, []archive.Hold{{ID: "LH-5", Type: "address", Value: "witness@beta.test"}, {ID: "LH-6", Type: "domain", Value: "alpha.test"}}, holds)
	assert.Contains(t, reason, "LH-5")
	assert.Contains(t, reason, "LH-6")
}

func testEraseAndPurge(t *testing.T, d database.Dialect) {
	f := newFixture(t, d)
	ctx := context.Background()
	mails := archivetest.GenerateMail(rand.New(rand.NewSource(11)), 60, erasurePool, time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC))
	ids := f.storeMail(t, "acme", mails)
	held := hold{"LH-1", "address", "erin@gamma.test", "active"}
	f.placeHolds(t, "acme", held)
	subject := []string{"alice@alpha.test"}
	now := time.Date(2026, 6, 10, 15, 30, 0, 0, time.UTC)

	var want []int64
	for i, m := range mails {
		if wantScope([]archivetest.Mail{m}, subject).Affected == 1 && !heldBy(m, held) {
			want = append(want, ids[i])
		}
	}
	require.NotEmpty(t, want)
	req := archive.EraseRequest{Tenant: "acme", RequestID: "GDPR-2026-00001", Addresses: subject, Today: now, Batch: 7}
	n, err := f.arc.Erase(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, len(want), n, "erased count")
	assert.Equal(t, want, f.erasedIDs(t, "GDPR-2026-00001"), "erased messages")
	f.assertInvisible(t, want)

	n, err = f.arc.Erase(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, len(want), n, "a second run finds everything done and counts the same")

	// Purge: erased files go, held and unexpired messages stay; a held, expired one too.
	var heldID int64
	for i, m := range mails {
		if heldBy(m, held) {
			heldID = ids[i]
			break
		}
	}
	assert.True(t, f.indexed(t, heldID), "a message under hold stays in the index")
	_, err = f.db.Exec(f.db.Rebind(`UPDATE metadata SET retained = ? WHERE id = ?`), database.TimeArg(d, now.AddDate(-1, 0, 0)), heldID)
	require.NoError(t, err)
	res, err := f.arc.Purge(ctx, now, archive.PurgeOptions{Batch: 4})
	require.NoError(t, err)
	assert.Equal(t, len(want), res.Purged)
	assert.Equal(t, map[string]int{"acme": len(want)}, res.ByTenant)
	assert.Equal(t, 1, res.HeldBack, "the expired message under hold is kept")
	f.assertPurged(t, ids, want)

	res, err = f.arc.Purge(ctx, now, archive.PurgeOptions{})
	require.NoError(t, err)
	assert.Zero(t, res.Purged, "a second purge has nothing to do")
	n, err = f.arc.Erase(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, len(want), n, "the count survives the purge")
}

func (f *fixture) erasedIDs(t *testing.T, requestID string) []int64 {
	t.Helper()
	return dbtest.Column[int64](t, f.db, `SELECT id FROM metadata WHERE erased_by = ? ORDER BY id`, requestID)
}

// assertInvisible checks that no read serves the erased messages and that they left the
// full-text index, while their files still exist until purge.
func (f *fixture) assertInvisible(t *testing.T, erased []int64) {
	t.Helper()
	ctx := context.Background()
	msgs, _, err := f.arc.Search(ctx, archive.Query{Tenant: "acme", Limit: 500})
	require.NoError(t, err)
	for _, m := range msgs {
		assert.NotContains(t, erased, m.ID, "search returns erased message %d", m.ID)
	}
	for _, id := range erased {
		_, err := f.arc.Get(ctx, "acme", id)
		assert.ErrorIs(t, err, archive.ErrNotFound, "get %d", id)
		_, err = f.arc.Raw(ctx, "acme", id)
		assert.ErrorIs(t, err, archive.ErrNotFound, "raw %d", id)
		assert.False(t, f.indexed(t, id), "message %d still in the full-text index", id)
		assert.True(t, f.hasFile(t, id), "message %d lost its file before purge", id)
	}
	var retained any
	require.NoError(t, f.db.QueryRow(f.db.Rebind(`SELECT retained FROM metadata WHERE id = ?`), erased[0]).Scan(&retained))
	got, err := database.TimeValue(retained)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 6, 10, 0, 0, 0, 0, time.UTC), got, "retained; want the start of the execution day")
}

func (f *fixture) assertPurged(t *testing.T, all, purged []int64) {
	t.Helper()
	for _, id := range all {
		var deleted int
		require.NoError(t, f.db.QueryRow(f.db.Rebind(`SELECT deleted FROM metadata WHERE id = ?`), id).Scan(&deleted))
		want := slices.Contains(purged, id)
		assert.Equal(t, want, deleted == 1, "message %d deleted flag", id)
		assert.Equal(t, !want, f.hasFile(t, id), "message %d file present", id)
	}
}

func (f *fixture) indexed(t *testing.T, id int64) bool {
	t.Helper()
	q := `SELECT COUNT(*) FROM message_search WHERE id = ?`
	switch f.db.Dialect {
	case database.SQLite:
		q = `SELECT COUNT(*) FROM message_search WHERE rowid = ?`
	case database.MySQL:
		q = `SELECT COUNT(*) FROM search_term WHERE id = ?`
		var docs int
		require.NoError(t, f.db.QueryRow(`SELECT COUNT(*) FROM search_doc WHERE id = ?`, id).Scan(&docs))
		if docs > 0 {
			return true
		}
	}
	var n int
	require.NoError(t, f.db.QueryRow(f.db.Rebind(q), id).Scan(&n))
	return n > 0
}

func (f *fixture) hasFile(t *testing.T, id int64) bool {
	t.Helper()
	blobs, err := archive.NewLocalStore(filepath.Join(f.dataDir, "store"))
	require.NoError(t, err)
	_, err = blobs.Get(context.Background(), archive.MessageKey("acme", id))
	if err != nil {
		require.ErrorIs(t, err, archive.ErrBlobNotFound)
		return false
	}
	return true
}
