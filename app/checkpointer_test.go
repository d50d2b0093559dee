package app_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/internal/testenv"
)

const testOrigin = "mailledger.test/app"

func (f *ledgerFixture) signer() (*eventstore.Signer, *eventstore.Key) {
	f.t.Helper()
	return testenv.Signer(f.t, f.store, testOrigin)
}

// runCheckpointer runs a Checkpointer until the test ends.
func (f *ledgerFixture) runCheckpointer(cfg app.CheckpointerConfig) (*app.Checkpointer, *eventstore.Key) {
	f.t.Helper()
	signer, key := f.signer()
	cfg.Logger = slog.New(slog.DiscardHandler)
	c, err := app.NewCheckpointer(f.store, signer, cfg)
	require.NoError(f.t, err)
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	f.t.Cleanup(func() {
		cancel()
		require.NoError(f.t, <-done)
	})
	return c, key
}

func (f *ledgerFixture) checkpoints() []*eventstore.Checkpoint {
	f.t.Helper()
	cps, err := f.store.Checkpoints(f.ctx)
	require.NoError(f.t, err)
	return cps
}

func (f *ledgerFixture) latestSize() int64 {
	f.t.Helper()
	cp, err := f.store.LatestCheckpoint(f.ctx)
	if err != nil {
		return 0
	}
	return cp.Size
}

// requireValid checks a stored checkpoint's signature, body and root against the log.
func (f *ledgerFixture) requireValid(cp *eventstore.Checkpoint, key *eventstore.Key) {
	f.t.Helper()
	opened, err := eventstore.OpenCheckpoint(cp.Note, key.PublicKey)
	require.NoError(f.t, err, "checkpoint of size %d", cp.Size)
	assert.Equal(f.t, cp.Size, opened.Size)
	assert.Equal(f.t, testOrigin, opened.Origin)
	root, err := f.store.RootAt(f.ctx, cp.Size)
	require.NoError(f.t, err)
	assert.Equal(f.t, root, opened.RootHash, "root of size %d", cp.Size)
}

// TestCheckpointerEveryThousandEvents: 2500 appends give two valid checkpoints, one in
// [1000, 2000) and one in [2000, 2500] events, and none more while the interval has not
// passed. (The appends run flat out, so a checkpoint covers the head when it was signed.)
func TestCheckpointerEveryThousandEvents(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newLedgerFixture(t, d)
		_, key := f.runCheckpointer(app.CheckpointerConfig{Interval: time.Hour})
		f.appendEvents(2500)
		require.Eventually(t, func() bool { return len(f.checkpoints()) >= 2 }, 20*time.Second, 10*time.Millisecond)
		time.Sleep(200 * time.Millisecond) // deliberate: no third checkpoint may come in this window
		cps := f.checkpoints()
		require.Len(t, cps, 2, "checkpoints after 2500 events")
		t.Logf("checkpoint sizes: %d, %d", cps[0].Size, cps[1].Size)
		for i, cp := range cps {
			due := int64(i+1) * 1000 // signed once due, at the head of that moment
			assert.GreaterOrEqual(t, cp.Size, due, "checkpoint %d", i)
			assert.Less(t, cp.Size, due+1000, "checkpoint %d", i)
			f.requireValid(cp, key)
		}
		assert.GreaterOrEqual(t, cps[1].Size-cps[0].Size, int64(1000), "1000 events between checkpoints")
	})
}

// TestCheckpointerInterval: new events are signed at the next interval even below Every,
// and an unchanged head is not signed again.
func TestCheckpointerInterval(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newLedgerFixture(t, d)
		_, key := f.runCheckpointer(app.CheckpointerConfig{Interval: 100 * time.Millisecond})
		f.appendEvents(5)
		require.Eventually(t, func() bool { return f.latestSize() == 5 }, 5*time.Second, 10*time.Millisecond)
		f.appendEvents(3)
		require.Eventually(t, func() bool { return f.latestSize() == 8 }, 5*time.Second, 10*time.Millisecond)
		time.Sleep(300 * time.Millisecond) // deliberate: nothing may be signed in these three intervals
		cps := f.checkpoints()
		require.Len(t, cps, 2, "an unchanged head is not signed again")
		for _, cp := range cps {
			f.requireValid(cp, key)
		}
	})
}

// TestCheckpointerPollsForOtherWriters: appends through another Store (another node) are
// seen by polling.
func TestCheckpointerPollsForOtherWriters(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t, database.SQLite)
	f.runCheckpointer(app.CheckpointerConfig{Every: 10, Interval: time.Hour, Poll: 50 * time.Millisecond})
	other, err := eventstore.New(f.db, eventstore.Options{})
	require.NoError(t, err)
	f.store = other
	f.appendEvents(10)
	require.Eventually(t, func() bool { return f.latestSize() == 10 }, 5*time.Second, 10*time.Millisecond)
}

func TestCheckpointerOnDemand(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t, database.SQLite)
	signer, key := f.signer()
	c, err := app.NewCheckpointer(f.store, signer, app.CheckpointerConfig{})
	require.NoError(t, err)
	f.appendEvents(7)
	cp, err := c.Checkpoint(f.ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(7), cp.Size)
	f.requireValid(cp, key)
	again, err := c.Checkpoint(f.ctx)
	require.NoError(t, err)
	assert.Equal(t, cp.Note, again.Note, "an unchanged head gives the same checkpoint")
	assert.Len(t, f.checkpoints(), 1)
}

func TestCheckpointerConfig(t *testing.T) {
	t.Parallel()
	err := app.CheckpointerConfig{Every: -1, Interval: -1, Poll: -1}.Validate()
	require.Error(t, err)
	for _, want := range []string{"every", "interval", "poll"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NoError(t, app.CheckpointerConfig{}.Validate())
	_, err = app.NewCheckpointer(nil, nil, app.CheckpointerConfig{})
	assert.Error(t, err)
}
