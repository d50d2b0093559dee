package app_test

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

// TestErasureRequestIDs checks that 50 concurrent creates get 50 distinct, consecutive
// ids, that the sequence restarts each year, and that a rebuild reproduces it.
func TestErasureRequestIDs(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		now := time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)
		f := newErasureFixture(t, d, app.ErasureConfig{Clock: func() time.Time { return now }})
		var wg sync.WaitGroup
		ids := make([]string, 50)
		errs := make([]error, 50)
		for i := range ids {
			wg.Go(func() {
				v, err := f.er.Create(f.ctx, "acme", app.CreateRequestInput{EmailAddresses: []string{fmt.Sprintf("s%d@x.test", i)}}, actor("creator"))
				errs[i] = err
				if err == nil {
					ids[i] = v.RequestID
				}
			})
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		sort.Strings(ids)
		for i, id := range ids {
			assert.Equal(t, fmt.Sprintf("GDPR-2026-%05d", i+1), id)
		}
		now = now.Add(2 * time.Hour)
		assert.Equal(t, "GDPR-2027-00001", f.create("acme", "a@x.test").RequestID, "a new year restarts the sequence")

		before := f.sequences()
		assert.Equal(t, map[string]int{"2026": 50, "2027": 1}, before)
		_, err := projections.Rebuild(f.ctx, f.store, nil)
		require.NoError(t, err)
		assert.Equal(t, before, f.sequences(), "sequence after a rebuild")
		assert.Equal(t, "GDPR-2027-00002", f.create("acme", "b@x.test").RequestID)
	})
}

func (f *erasureFixture) sequences() map[string]int {
	f.t.Helper()
	rows, err := f.db.Query(`SELECT year_prefix, last_sequence FROM gdpr_request_sequence`)
	require.NoError(f.t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var y string
		var n int
		require.NoError(f.t, rows.Scan(&y, &n))
		out[y] = n
	}
	require.NoError(f.t, rows.Err())
	return out
}

// TestErasureFlow runs a request through every stage with the real background consumers:
// counts equal to an independent count, blocked by an address hold and a domain hold and
// unblocked by release and re-assessment, approved, executed, and the erased mail
// invisible.
func TestErasureFlow(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newErasureFixture(t, d, app.ErasureConfig{EraseBatch: 5})
		mails := archivetest.GenerateMail(rand.New(rand.NewSource(3)), 60, erasurePool, mailStart)
		ids := f.archiveMail("acme", mails)
		f.archiveMail("globex", mails[:10])
		stop := f.runBackground()
		defer stop()

		subject := []string{"alice@alpha.test"}
		req := f.create("acme", "Alice@Alpha.test")
		assert.Equal(t, subject, req.EmailAddresses)
		req = f.await("acme", req.RequestID, erasure.StatusPendingApproval)
		f.assertCounts(req, mails, subject)

		witness := f.witness(mails, subject)
		for _, h := range []holdSpec{{"address", witness}, {"domain", "gamma.test"}} {
			id := f.placeHold("acme", h.typ, h.value)
			_, err := f.er.Assess(f.ctx, "acme", req.RequestID, actor("auditor"))
			require.NoError(t, err)
			req = f.await("acme", req.RequestID, erasure.StatusBlocked)
			assert.True(t, req.BlockedByLegalHold)
			assert.Equal(t, []string{id}, req.LegalHoldIDs, "%s hold", h.typ)
			require.NotNil(t, req.BlockedReason)
			assert.Contains(t, *req.BlockedReason, h.value)
			f.release("acme", id)
			_, err = f.er.Assess(f.ctx, "acme", req.RequestID, actor("auditor"))
			require.NoError(t, err)
			req = f.await("acme", req.RequestID, erasure.StatusPendingApproval)
			assert.False(t, req.BlockedByLegalHold)
			assert.Empty(t, req.LegalHoldIDs)
		}

		_, err := f.er.Approve(f.ctx, "acme", req.RequestID, actor("creator"))
		assert.ErrorIs(t, err, erasure.ErrDistinctApprover)
		_, err = f.er.Approve(f.ctx, "globex", req.RequestID, actor("approver"))
		assert.ErrorIs(t, err, app.ErrNotFound, "another tenant's request")
		req, err = f.er.Approve(f.ctx, "acme", req.RequestID, actor("approver"))
		require.NoError(t, err)
		assert.Equal(t, erasure.StatusApproved, req.Status)
		req, err = f.er.Execute(f.ctx, "acme", req.RequestID, actor("approver"))
		require.NoError(t, err)
		req = f.await("acme", req.RequestID, erasure.StatusCompleted)
		stop()

		var want []int64
		for i, m := range mails {
			if involves(m, subject) {
				want = append(want, ids[i])
			}
		}
		assert.Equal(t, len(want), req.DeletedCount)
		assert.Zero(t, req.RedactedCount)
		assert.NotNil(t, req.ExecutedAt)
		assert.True(t, req.CertificateAvailable)
		f.assertCertificate(req)
		f.assertErased(want, ids)
		f.assertAudit(req.RequestID)
	})
}

func (f *erasureFixture) runBackground() func() {
	f.t.Helper()
	bg, err := app.NewBackground(f.store, app.BackgroundConfig{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(f.t, err)
	f.er.Register(bg)
	done := make(chan error, 1)
	ctx, cancel := f.ctxWithCancel()
	go func() { done <- bg.Run(ctx) }()
	<-bg.Running()
	stopped := false
	return func() {
		if !stopped {
			stopped = true
			cancel()
			require.NoError(f.t, <-done)
		}
	}
}

// await waits until the request reaches status.
func (f *erasureFixture) await(tenant, id, status string) *app.RequestView {
	f.t.Helper()
	var v *app.RequestView
	require.Eventually(f.t, func() bool {
		v = f.get(tenant, id)
		return v.Status == status
	}, 20*time.Second, 10*time.Millisecond, "request %s never reached %s", id, status)
	return v
}

func (f *erasureFixture) assertCounts(v *app.RequestView, mails []archivetest.Mail, addrs []string) {
	f.t.Helper()
	var sender, recipient, attachments int
	for _, m := range mails {
		s, r := false, false
		for _, a := range addrs {
			s, r = s || m.Sends(a), r || m.Receives(a)
		}
		if s {
			sender++
		}
		if r {
			recipient++
		}
		if s || r {
			attachments += m.Attachments
		}
	}
	assert.Equal(f.t, []int{sender, recipient, attachments}, []int{v.EmailsAsSender, v.EmailsAsRecipient, v.AttachmentsCount},
		"sender, recipient and attachment counts")
	assert.Positive(f.t, sender+recipient)
}

// witness returns an address, not the subject's, that shares mail with the subject.
func (f *erasureFixture) witness(mails []archivetest.Mail, subject []string) string {
	for _, m := range mails {
		if !involves(m, subject) {
			continue
		}
		for _, p := range m.Participants() {
			if p != subject[0] && p[len(p)-10:] != "gamma.test" {
				return p
			}
		}
	}
	f.t.Fatal("no witness")
	return ""
}

func (f *erasureFixture) assertCertificate(v *app.RequestView) {
	f.t.Helper()
	require.NotNil(f.t, v.CertificateHash)
	recs, err := f.store.Load(f.ctx, erasure.StreamID(v.RequestID))
	require.NoError(f.t, err)
	body, err := certificate.BodyFromEvents(recs)
	require.NoError(f.t, err)
	hash, err := body.Hash()
	require.NoError(f.t, err)
	last := recs[len(recs)-1]
	assert.Equal(f.t, erasure.EventExecutionCompleted, last.EventType)
	assert.Equal(f.t, last.Position, v.CompletionPosition)
	assert.Equal(f.t, hash, *v.CertificateHash, "hash of the body rebuilt from the events")
}

func (f *erasureFixture) assertErased(want, all []int64) {
	f.t.Helper()
	marks := f.erasedBy(all)
	for _, id := range all {
		_, err := f.arc.Get(f.ctx, "acme", id)
		if contains(want, id) {
			assert.NotEmpty(f.t, marks[id], "message %d not erased", id)
			assert.ErrorIs(f.t, err, archive.ErrNotFound, "get erased message %d", id)
			_, err = f.arc.Raw(f.ctx, "acme", id)
			assert.ErrorIs(f.t, err, archive.ErrNotFound, "raw erased message %d", id)
			continue
		}
		assert.Empty(f.t, marks[id], "message %d erased", id)
		assert.NoError(f.t, err, "get kept message %d", id)
	}
	msgs, total, err := f.arc.Search(f.ctx, archive.Query{Tenant: "acme", Text: "generated", Limit: 500})
	require.NoError(f.t, err)
	assert.Equal(f.t, len(all)-len(want), total, "search total")
	for _, m := range msgs {
		assert.NotContains(f.t, want, m.ID, "search finds erased message %d", m.ID)
	}
}

func (f *erasureFixture) assertAudit(id string) {
	f.t.Helper()
	audit, err := f.er.Audit(f.ctx, "acme", id)
	require.NoError(f.t, err)
	var actions, by []string
	for _, a := range audit {
		actions, by = append(actions, a.Action), append(by, a.PerformedBy)
	}
	assert.Equal(f.t, []string{"created", "assessment_started", "assessment_completed",
		"assessment_started", "assessment_blocked", "assessment_started", "assessment_completed",
		"assessment_started", "assessment_blocked", "assessment_started", "assessment_completed",
		"approved", "execution_started", "execution_completed"}, actions)
	assert.Equal(f.t, []string{"creator", "system:assessor", "system:assessor", "auditor", "system:assessor",
		"auditor", "system:assessor", "auditor", "system:assessor", "auditor", "system:assessor",
		"approver", "approver", "system:executor"}, by)
	require.NotNil(f.t, audit[0].IPAddress)
	assert.Equal(f.t, "192.0.2.7", *audit[0].IPAddress)
	assert.Nil(f.t, audit[1].IPAddress, "system events have no client address")
	assert.JSONEq(f.t, `{"created_by":"creator","email_addresses":["alice@alpha.test"],"requester_name":"Data Subject"}`, string(audit[0].Details))
	_, err = f.er.Audit(f.ctx, "globex", id)
	assert.ErrorIs(f.t, err, app.ErrNotFound, "another tenant's audit")
}

func contains(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// TestErasureHoldAfterApproval checks that a hold placed after approval blocks the
// execution, and that nothing is erased.
func TestErasureHoldAfterApproval(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newErasureFixture(t, d)
		mails := archivetest.GenerateMail(rand.New(rand.NewSource(5)), 20, erasurePool, mailStart)
		ids := f.archiveMail("acme", mails)
		req := f.create("acme", "bob@alpha.test")
		f.drain()
		_, err := f.er.Approve(f.ctx, "acme", req.RequestID, actor("approver"))
		require.NoError(t, err)
		hold := f.placeHold("acme", "domain", "alpha.test")
		v, err := f.er.Execute(f.ctx, "acme", req.RequestID, actor("approver"))
		require.NoError(t, err)
		assert.Equal(t, erasure.StatusBlocked, v.Status)
		assert.Equal(t, []string{hold}, v.LegalHoldIDs)
		f.drain()
		for id, by := range f.erasedBy(ids) {
			assert.Empty(t, by, "message %d erased", id)
		}
		_, err = f.er.Execute(f.ctx, "acme", req.RequestID, actor("approver"))
		assert.ErrorIs(t, err, domain.ErrInvalidTransition, "execute from blocked")
	})
}

// TestErasureConcurrentApprovals checks that of 20 concurrent approvals exactly one wins.
func TestErasureConcurrentApprovals(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newErasureFixture(t, d)
		req := f.create("acme", "alice@alpha.test")
		f.drain()
		require.Equal(t, erasure.StatusPendingApproval, f.get("acme", req.RequestID).Status)
		var wg sync.WaitGroup
		errs := make([]error, 20)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = f.er.Approve(f.ctx, "acme", req.RequestID, actor(fmt.Sprintf("approver%d", i)))
			})
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
				continue
			}
			lost := errors.Is(err, eventstore.ErrConcurrentModification) || errors.Is(err, domain.ErrInvalidTransition)
			assert.True(t, lost, "got %v; want a lost race", err)
		}
		assert.Equal(t, 1, wins, "successful approvals")
		audit, err := f.er.Audit(f.ctx, "acme", req.RequestID)
		require.NoError(t, err)
		assert.Equal(t, "approved", audit[len(audit)-1].Action)
		assert.Equal(t, "assessment_completed", audit[len(audit)-2].Action, "one approval recorded")
	})
}
