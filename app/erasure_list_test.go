package app_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
)

// TestErasureListAndGet checks filtering, paging, ordering, validation and tenant
// isolation of the request queries, and the reject command.
func TestErasureListAndGet(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newErasureFixture(t, d)
		var acme []string
		for i := range 5 {
			acme = append(acme, f.create("acme", erasurePool[i]).RequestID)
			time.Sleep(2 * time.Millisecond) // deliberate: the clock moves on, for distinct created_at
		}
		other := f.create("globex", "alice@alpha.test")
		f.drain()
		_, err := f.er.Reject(f.ctx, "acme", acme[0], "  ", actor("approver"))
		assert.ErrorIs(t, err, domain.ErrValidation, "blank reason")
		rejected, err := f.er.Reject(f.ctx, "acme", acme[0], "identity not verified", actor("approver"))
		require.NoError(t, err)
		assert.Equal(t, erasure.StatusRejected, rejected.Status)
		require.NotNil(t, rejected.ApprovedBy)
		assert.Equal(t, "approver", *rejected.ApprovedBy)
		assert.NotNil(t, rejected.ApprovedAt)

		page, err := f.er.List(f.ctx, "acme", app.ListRequestsInput{})
		require.NoError(t, err)
		assert.Equal(t, 5, page.Total)
		assert.Equal(t, app.DefaultRequestLimit, page.Limit)
		assert.Equal(t, []string{acme[4], acme[3], acme[2], acme[1], acme[0]}, requestIDs(page), "newest first")

		page, err = f.er.List(f.ctx, "acme", app.ListRequestsInput{Limit: 2, Offset: 1})
		require.NoError(t, err)
		assert.Equal(t, []string{acme[3], acme[2]}, requestIDs(page))
		assert.Equal(t, 5, page.Total)

		page, err = f.er.List(f.ctx, "acme", app.ListRequestsInput{Status: erasure.StatusRejected})
		require.NoError(t, err)
		assert.Equal(t, []string{acme[0]}, requestIDs(page))

		page, err = f.er.List(f.ctx, app.AllTenants, app.ListRequestsInput{})
		require.NoError(t, err)
		assert.Equal(t, 6, page.Total, "an administrator sees every tenant")

		for _, bad := range []app.ListRequestsInput{{Status: "done"}, {Limit: 501}, {Limit: -1}, {Offset: -1}} {
			_, err := f.er.List(f.ctx, "acme", bad)
			assert.ErrorIs(t, err, domain.ErrValidation, "%+v", bad)
		}

		_, err = f.er.Get(f.ctx, "acme", other.RequestID)
		assert.ErrorIs(t, err, app.ErrNotFound, "another tenant's request")
		_, err = f.er.Get(f.ctx, "acme", "GDPR-2026-99999")
		assert.ErrorIs(t, err, app.ErrNotFound)
		_, err = f.er.Assess(f.ctx, "acme", other.RequestID, actor("auditor"))
		assert.ErrorIs(t, err, app.ErrNotFound)
		got, err := f.er.Get(f.ctx, app.AllTenants, other.RequestID)
		require.NoError(t, err)
		assert.Equal(t, "globex", got.TenantID)
		assert.Equal(t, []string{}, got.LegalHoldIDs)
		assert.False(t, got.CertificateAvailable)
		require.NotNil(t, got.RequesterName)
		assert.Equal(t, "Data Subject", *got.RequesterName)
	})
}

func requestIDs(l *app.RequestList) []string {
	out := []string{}
	for _, r := range l.Requests {
		out = append(out, r.RequestID)
	}
	return out
}

// TestErasureConsumersIdempotent delivers every event of a completed request again, and
// the execution event once more after completion: nothing changes.
func TestErasureConsumersIdempotent(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newErasureFixture(t, d)
		f.archiveMail("acme", generated(12))
		req := f.create("acme", "alice@alpha.test")
		f.drain()
		_, err := f.er.Approve(f.ctx, "acme", req.RequestID, actor("approver"))
		require.NoError(t, err)
		_, err = f.er.Execute(f.ctx, "acme", req.RequestID, actor("approver"))
		require.NoError(t, err)
		f.drain()
		done := f.get("acme", req.RequestID)
		require.Equal(t, erasure.StatusCompleted, done.Status)
		head, err := f.store.Head(f.ctx)
		require.NoError(t, err)

		f.drained = 0
		f.drain()
		after, err := f.store.Head(f.ctx)
		require.NoError(t, err)
		assert.Equal(t, head.Size, after.Size, "a second delivery appends nothing")
		assert.Equal(t, done, f.get("acme", req.RequestID))
	})
}
