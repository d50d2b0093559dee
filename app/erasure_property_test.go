package app_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/erasure"
)

// propertyHold is a hold placed during one run of the property, and the step at which it
// was placed; a released hold has released set.
type propertyHold struct {
	holdSpec
	id       string
	placedAt int
	released bool
}

// propertyRun is one random scenario: mail, holds placed and released at random moments,
// and requests taken as far as they go.
type propertyRun struct {
	f        *erasureFixture
	rng      *rand.Rand
	tenant   string
	mails    []archivetest.Mail
	ids      []int64
	holds    []*propertyHold
	executed map[string]int // request id → step of its execution
	step     int
	stats    *propertyStats
}

// propertyStats shows that the random runs reached the interesting cases.
type propertyStats struct {
	blocked, erased, heldAndInScope int
}

// TestErasureNeverTouchesHeldMail is the property: whatever the holds and requests, no
// email under an active hold is ever erased or purged. Each run also checks that an
// executed request erased every unheld email of its scope.
func TestErasureNeverTouchesHeldMail(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		runs := 20
		if d != database.SQLite {
			runs = 4
		}
		f := newErasureFixture(t, d)
		stats := &propertyStats{}
		for i := range runs {
			p := &propertyRun{f: f, rng: rand.New(rand.NewSource(int64(1000 + i))), tenant: fmt.Sprintf("p%d", i), executed: map[string]int{}, stats: stats}
			p.run()
			p.checkHeldUntouched()
			p.purgeAndCheck(i)
		}
		t.Logf("blocked executions %d, erased %d, held emails in an executed scope %d", stats.blocked, stats.erased, stats.heldAndInScope)
		require.Positive(t, stats.erased, "no run erased anything")
		require.Positive(t, stats.heldAndInScope, "no run executed a request with held mail in its scope")
		if d == database.SQLite {
			require.Positive(t, stats.blocked, "no run blocked an execution")
		}
	})
}

func (p *propertyRun) run() {
	p.mails = archivetest.GenerateMail(p.rng, 25, erasurePool, mailStart)
	p.ids = p.f.archiveMail(p.tenant, p.mails)
	for range p.rng.Intn(3) {
		p.maybeHold()
	}
	for range 1 + p.rng.Intn(3) {
		p.request()
	}
}

func (p *propertyRun) maybeHold() {
	p.step++
	spec := holdSpec{"address", erasurePool[p.rng.Intn(len(erasurePool))]}
	if p.rng.Intn(3) == 0 {
		spec = holdSpec{"domain", []string{"alpha.test", "beta.test", "gamma.test"}[p.rng.Intn(3)]}
	}
	h := &propertyHold{holdSpec: spec, id: p.f.placeHold(p.tenant, spec.typ, spec.value), placedAt: p.step}
	p.holds = append(p.holds, h)
	if p.rng.Intn(4) == 0 {
		p.f.release(p.tenant, h.id)
		h.released = true
	}
}

// request creates a request for one or two random addresses and takes it as far as it
// goes, placing or releasing holds on the way.
func (p *propertyRun) request() {
	addrs := []string{erasurePool[p.rng.Intn(len(erasurePool))]}
	if p.rng.Intn(2) == 0 {
		addrs = append(addrs, erasurePool[p.rng.Intn(len(erasurePool))])
	}
	v := p.f.create(p.tenant, addrs...)
	p.f.drain()
	v = p.f.get(p.tenant, v.RequestID)
	if v.Status == erasure.StatusBlocked && p.rng.Intn(2) == 0 {
		p.releaseAll()
		_, err := p.f.er.Assess(p.f.ctx, p.tenant, v.RequestID, actor("auditor"))
		require.NoError(p.f.t, err)
		p.f.drain()
		v = p.f.get(p.tenant, v.RequestID)
	}
	if v.Status != erasure.StatusPendingApproval {
		return
	}
	_, err := p.f.er.Approve(p.f.ctx, p.tenant, v.RequestID, actor("approver"))
	require.NoError(p.f.t, err)
	if p.rng.Intn(3) == 0 {
		p.maybeHold() // placed after approval
	}
	p.step++
	v, err = p.f.er.Execute(p.f.ctx, p.tenant, v.RequestID, actor("approver"))
	require.NoError(p.f.t, err)
	p.stats.blocked += boolInt(v.Status == erasure.StatusBlocked)
	if v.Status == erasure.StatusExecuting && p.rng.Intn(3) == 0 {
		p.maybeHold() // placed while executing: the executor must skip what it covers
	}
	p.step++
	p.f.drain()
	if v.Status == erasure.StatusExecuting {
		p.executed[v.RequestID] = p.step
		p.checkComplete(v.RequestID, addrs)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (p *propertyRun) releaseAll() {
	for _, h := range p.holds {
		if !h.released {
			p.f.release(p.tenant, h.id)
			h.released = true
		}
	}
}

// activeHoldCovers reports whether a hold that is active now covers mail i.
func (p *propertyRun) activeHoldCovers(i int) bool {
	for _, h := range p.holds {
		if !h.released && h.covers(p.mails[i]) {
			return true
		}
	}
	return false
}

// checkComplete checks a just-executed request: completed, with every email of its scope
// either erased or under an active hold, and its count equal to its marks.
func (p *propertyRun) checkComplete(id string, addrs []string) {
	t := p.f.t
	v := p.f.get(p.tenant, id)
	require.Equal(t, erasure.StatusCompleted, v.Status, "request %s", id)
	marks := p.f.erasedBy(p.ids)
	mine := 0
	for i, m := range p.mails {
		if marks[p.ids[i]] == id {
			mine++
		}
		if involves(m, addrs) && marks[p.ids[i]] == "" {
			require.True(t, p.activeHoldCovers(i), "message %d of %s's scope neither erased nor held", p.ids[i], id)
			p.stats.heldAndInScope++
		}
	}
	require.Equal(t, mine, v.DeletedCount, "deleted count of %s", id)
	p.stats.erased += mine
}

// checkHeldUntouched checks the property: an email covered by a hold that is still active
// was not erased by any execution after the hold was placed.
func (p *propertyRun) checkHeldUntouched() {
	marks := p.f.erasedBy(p.ids)
	for i := range p.mails {
		by := marks[p.ids[i]]
		if by == "" {
			continue
		}
		for _, h := range p.holds {
			if !h.released && h.covers(p.mails[i]) {
				require.Less(p.f.t, p.executed[by], h.placedAt,
					"message %d under hold %s (%s %s) erased by %s", p.ids[i], h.id, h.typ, h.value, by)
			}
		}
	}
}

// purgeAndCheck ages some held emails past retention, purges a day later, and checks that
// no email under an active hold was purged (an erased one that a later hold covers keeps
// its file too) while every other erased email was.
func (p *propertyRun) purgeAndCheck(run int) {
	t, db := p.f.t, p.f.db
	for i := range p.mails {
		if p.activeHoldCovers(i) && p.rng.Intn(2) == 0 {
			_, err := db.Exec(db.Rebind(`UPDATE metadata SET retained = ? WHERE id = ?`), database.TimeArg(db.Dialect, mailStart), p.ids[i])
			require.NoError(t, err)
		}
	}
	purger, err := app.NewPurger(p.f.store, p.f.arc, app.PurgerConfig{Clock: func() time.Time { return time.Now().Add(24 * time.Hour) }})
	require.NoError(t, err)
	_, err = purger.RunOnce(p.f.ctx)
	require.NoError(t, err)
	marks := p.f.erasedBy(p.ids)
	for i := range p.mails {
		var deleted int
		require.NoError(t, db.QueryRow(db.Rebind(`SELECT deleted FROM metadata WHERE id = ?`), p.ids[i]).Scan(&deleted))
		_, rawErr := p.f.arc.Raw(p.f.ctx, p.tenant, p.ids[i])
		switch {
		case p.activeHoldCovers(i):
			require.Zero(t, deleted, "run %d: held message %d purged", run, p.ids[i])
			if marks[p.ids[i]] == "" {
				require.NoError(t, rawErr, "run %d: held message %d unreadable", run, p.ids[i])
			}
		case marks[p.ids[i]] != "":
			require.Equal(t, 1, deleted, "run %d: erased message %d not purged", run, p.ids[i])
		}
	}
}
