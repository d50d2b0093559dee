package app_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/domain/export"
)

// TestExportSkipsErasedMail: mail erased by an executed request is skipped (as not
// found), mail in the scope of an approved request that has not run yet is skipped too,
// and only the rest is produced and numbered.
func TestExportSkipsErasedMail(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d, app.ExportsConfig{})
		mails := generated(60)
		ids := f.archiveMail("acme", mails)
		erased, pending := []string{"alice@alpha.test"}, []string{"bob@alpha.test"}
		f.eraseFor("acme", erased, true)
		f.eraseFor("acme", pending, false)
		f.start()
		v := f.createExport("acme", request("ERASE", ids))
		v = f.awaitExport("acme", v.JobID, export.StatusCompleted)
		c := &productionCase{f: f, view: v}
		items := c.items()
		produced := 0
		for i, m := range mails {
			it := items[ids[i]]
			switch {
			case involves(m, erased):
				assert.Equal(t, item{status: export.ItemSkipped, message: app.SkipNotFound}, it, "erased email %d", ids[i])
			case involves(m, pending):
				assert.Equal(t, item{status: export.ItemSkipped, message: app.SkipPendingErasure}, it, "email %d of an approved erasure", ids[i])
			default:
				produced++
				assert.Equal(t, export.ItemSuccess, it.status)
			}
		}
		require.Positive(t, produced)
		require.Less(t, produced, len(mails), "some mail is skipped")
		require.NotNil(t, v.BatesEnd)
		assert.Equal(t, int64(produced), *v.BatesEnd, "only produced emails take numbers")
	})
}

// eraseFor takes an erasure request for addrs through assessment and approval, and
// executes it when execute is set.
func (f *exportFixture) eraseFor(tenant string, addrs []string, execute bool) {
	f.t.Helper()
	req := f.erasureFixture.create(tenant, addrs...)
	f.drain()
	_, err := f.er.Approve(f.ctx, tenant, req.RequestID, actor("approver"))
	require.NoError(f.t, err)
	if execute {
		_, err = f.er.Execute(f.ctx, tenant, req.RequestID, actor("approver"))
		require.NoError(f.t, err)
		f.drain()
	}
	want := map[bool]string{true: erasure.StatusCompleted, false: erasure.StatusApproved}[execute]
	require.Equal(f.t, want, f.get(tenant, req.RequestID).Status)
}
