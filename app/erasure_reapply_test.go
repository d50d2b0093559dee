package app_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
)

// TestReapplyAfterARestore: an erasure executed and purged; then the store comes back from
// a backup taken before it (the files return), then the archive's tables too (the marks
// are gone); each time Reapply erases the same messages again and their files go at the
// next purge, and mail the subject sent after the erasure stays.
func TestReapplyAfterARestore(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newErasureFixture(t, d)
		ids := f.archiveMail("acme", generated(30))
		storeDir := filepath.Join(f.dataDir, "store")
		backup := t.TempDir()
		require.NoError(t, os.CopyFS(backup, os.DirFS(storeDir)), "the store's backup, before the erasure")
		req := f.erase("acme", "carol@beta.test")
		erased := f.erasedIDs(ids, req.RequestID)
		require.NotEmpty(t, erased)
		purger, err := app.NewPurger(f.store, f.arc, app.PurgerConfig{Clock: func() time.Time { return time.Now().Add(48 * time.Hour) }})
		require.NoError(t, err)
		purge := func() {
			t.Helper()
			_, err := purger.RunOnce(f.ctx)
			require.NoError(t, err)
		}
		purge()

		// The store is restored: the erased messages' files are back.
		require.NoError(t, os.RemoveAll(storeDir))
		require.NoError(t, os.CopyFS(storeDir, os.DirFS(backup)))
		for _, id := range erased {
			require.True(t, f.hasFile(id), "file of erased message %d restored", id)
		}
		older, err := f.er.ArchiveLooksOlder(f.ctx)
		require.NoError(t, err)
		assert.False(t, older, "the marks are there: only the store is older")
		rep, err := f.er.Reapply(f.ctx, "operator")
		require.NoError(t, err)
		assert.Equal(t, []app.ReappliedRequest{{RequestID: req.RequestID, TenantID: "acme", FilesReturned: len(erased)}}, rep.Requests)
		purge()
		for _, id := range ids {
			assert.Equal(t, !slices.Contains(erased, id), f.hasFile(id), "file of message %d after the purge", id)
		}

		// The archive's tables are restored from before the erasure: its marks are gone.
		_, err = f.db.Exec(f.db.Rebind(`UPDATE metadata SET erased_by = NULL, deleted = 0, retained = ? WHERE erased_by = ?`),
			database.TimeArg(d, time.Now().AddDate(10, 0, 0)), req.RequestID)
		require.NoError(t, err)
		later := f.archiveMail("acme", []archivetest.Mail{{From: "carol@beta.test", Recipients: []string{"bob@alpha.test"},
			Raw: archivetest.Message("carol@beta.test", []string{"bob@alpha.test"}, nil, "after the erasure", "new mail", time.Now().Add(time.Hour))}})
		older, err = f.er.ArchiveLooksOlder(f.ctx)
		require.NoError(t, err)
		assert.True(t, older, "a completed erasure with no message marked")
		rep, err = f.er.Reapply(f.ctx, "operator")
		require.NoError(t, err)
		require.Len(t, rep.Requests, 1)
		assert.Equal(t, len(erased), rep.Requests[0].Erased, "the same messages erased again")
		assert.ElementsMatch(t, erased, f.erasedIDs(ids, req.RequestID))
		assert.Empty(t, f.erasedBy(later)[later[0]], "mail the subject sent after the erasure stays")
		older, err = f.er.ArchiveLooksOlder(f.ctx)
		require.NoError(t, err)
		assert.False(t, older)

		assert.Equal(t, 2, f.countEvents(app.EventErasuresReapplied), "each run is in the ledger")
		key, err := eventstore.LoadOrCreateKey(t.TempDir(), "reapply-test")
		require.NoError(t, err)
		_, err = f.store.Verify(f.ctx, key.PublicKey, nil)
		assert.NoError(t, err, "the ledger verifies")
	})
}

// countEvents counts the ledger's events of type.
func (f *erasureFixture) countEvents(eventType string) int {
	f.t.Helper()
	var n int
	require.NoError(f.t, f.db.QueryRow(f.db.Rebind(`SELECT COUNT(*) FROM events WHERE event_type = ?`), eventType).Scan(&n))
	return n
}
