package app_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/erasure"
)

// TestPurgeAfterErasure checks that the files of erased mail stay until purge, that a
// purge pass removes them and records counts in the ledger, and that a second pass does
// nothing and records nothing.
func TestPurgeAfterErasure(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newErasureFixture(t, d)
		mails := generated(30)
		ids := f.archiveMail("acme", mails)
		f.archiveMail("globex", mails[:5])
		req := f.create("acme", "carol@beta.test")
		f.drain()
		_, err := f.er.Approve(f.ctx, "acme", req.RequestID, actor("approver"))
		require.NoError(t, err)
		_, err = f.er.Execute(f.ctx, "acme", req.RequestID, actor("approver"))
		require.NoError(t, err)
		f.drain()
		v := f.get("acme", req.RequestID)
		require.Equal(t, erasure.StatusCompleted, v.Status)
		require.Positive(t, v.DeletedCount)
		erased := f.erasedIDs(ids, req.RequestID)
		for _, id := range erased {
			assert.True(t, f.hasFile(id), "file of erased message %d is kept until purge", id)
		}

		purger, err := app.NewPurger(f.store, f.arc, app.PurgerConfig{Clock: time.Now})
		require.NoError(t, err)
		res, err := purger.RunOnce(f.ctx)
		require.NoError(t, err)
		assert.Equal(t, v.DeletedCount, res.Purged)
		assert.Equal(t, map[string]int{"acme": v.DeletedCount}, res.ByTenant)
		for _, id := range ids {
			assert.Equal(t, !contains(erased, id), f.hasFile(id), "file of message %d", id)
		}
		events := f.purgeEvents()
		require.Len(t, events, 1)
		assert.Equal(t, float64(v.DeletedCount), events[0]["purged"])

		res, err = purger.RunOnce(f.ctx)
		require.NoError(t, err)
		assert.Zero(t, res.Purged)
		assert.Len(t, f.purgeEvents(), 1, "a pass with nothing to purge records nothing")
	})
}

func (f *erasureFixture) erasedIDs(ids []int64, requestID string) []int64 {
	var out []int64
	for id, by := range f.erasedBy(ids) {
		if by == requestID {
			out = append(out, id)
		}
	}
	return out
}

func (f *erasureFixture) hasFile(id int64) bool {
	f.t.Helper()
	var tenant string
	require.NoError(f.t, f.db.QueryRow(f.db.Rebind(`SELECT tenant_id FROM metadata WHERE id = ?`), id).Scan(&tenant))
	blobs, err := archive.NewLocalStore(f.dataDir + "/store")
	require.NoError(f.t, err)
	_, err = blobs.Get(f.ctx, archive.MessageKey(tenant, id))
	return err == nil
}

// purgeEvents returns the payloads of the ledger's purge events.
func (f *erasureFixture) purgeEvents() []map[string]any {
	f.t.Helper()
	recs, err := f.store.ReadAll(f.ctx, 0, 10000)
	require.NoError(f.t, err)
	var out []map[string]any
	for _, r := range recs {
		if r.EventType != app.EventPurgeCompleted {
			continue
		}
		var m map[string]any
		require.NoError(f.t, json.Unmarshal(r.Data, &m))
		assert.Equal(f.t, "acme", r.TenantID)
		out = append(out, m)
	}
	return out
}
