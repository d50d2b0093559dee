package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mailledger/mailledger/eventstore"
)

// ledgerVerifier re-hashes the whole ledger (*eventstore.Store), calling progress as it
// goes.
type ledgerVerifier interface {
	Verify(ctx context.Context, vkey string, progress func(done, total int64)) (*eventstore.VerifyReport, error)
}

var _ ledgerVerifier = (*eventstore.Store)(nil)

// VerificationRun is one verification of the whole ledger, running or finished: who
// started it and when, its progress (Done of Total events), and once Finished, its
// outcome: OK with the Events checked, or Error, the first problem found (for a broken
// ledger, the first bad position).
type VerificationRun struct {
	StartedBy  string
	StartedAt  time.Time
	FinishedAt time.Time
	Done       int64
	Total      int64
	Finished   bool
	OK         bool
	Events     int64
	Error      string
}

// LedgerVerification runs `mailledger verify` in the background for the web console:
// at most one run at a time, its progress, and the last finished run. The state lives in
// the memory of this process only: a restart forgets the last result, and each node of
// several knows its own runs.
type LedgerVerification struct {
	store ledgerVerifier
	vkey  string
	now   func() time.Time

	mu      sync.Mutex
	running *VerificationRun
	last    *VerificationRun
	done    chan struct{} // closed when the running run ends
}

// NewLedgerVerification returns the verification use case over store, checking the
// checkpoints' signatures with the verifier key vkey; now is its clock (time.Now when
// nil).
func NewLedgerVerification(store ledgerVerifier, vkey string, now func() time.Time) (*LedgerVerification, error) {
	if store == nil || vkey == "" {
		return nil, errors.New("app: ledger verification needs a store and a public key")
	}
	if now == nil {
		now = time.Now
	}
	return &LedgerVerification{store: store, vkey: vkey, now: now}, nil
}

// Start starts a verification by actor in the background and returns it, with started
// true; while one runs, it starts nothing and returns the running one, with started
// false. The run does not end with the request that started it.
func (v *LedgerVerification) Start(actor string) (VerificationRun, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.running != nil {
		return *v.running, false
	}
	v.running = &VerificationRun{StartedBy: actor, StartedAt: v.now()}
	v.done = make(chan struct{})
	go v.run(v.running, v.done)
	return *v.running, true
}

func (v *LedgerVerification) run(r *VerificationRun, done chan struct{}) {
	report, err := v.store.Verify(context.Background(), v.vkey, func(d, total int64) {
		v.mu.Lock()
		r.Done, r.Total = d, total
		v.mu.Unlock()
	})
	v.mu.Lock()
	defer v.mu.Unlock()
	r.Finished, r.FinishedAt = true, v.now()
	if err != nil {
		r.Error = err.Error()
	} else {
		r.OK, r.Events = true, report.Events
	}
	v.last, v.running = r, nil
	close(done)
}

// Status returns a copy of the running verification (nil when none runs) and of the
// last finished one (nil before the first).
func (v *LedgerVerification) Status() (running, last *VerificationRun) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return copyRun(v.running), copyRun(v.last)
}

func copyRun(r *VerificationRun) *VerificationRun {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// Wait blocks until no verification runs, or ctx ends.
func (v *LedgerVerification) Wait(ctx context.Context) error {
	v.mu.Lock()
	done := v.done
	v.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
