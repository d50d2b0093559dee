package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
)

// TestLedgerVerification runs the console's verification over a real ledger: a run goes
// to OK with its progress at the head, and after one event is changed with plain SQL, the
// next run fails naming that position; the last result is the latest run's.
func TestLedgerVerification(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newLedgerFixture(t, d)
		f.appendEvents(25)
		_, key := f.signer()
		v, err := app.NewLedgerVerification(f.store, key.PublicKey, nil)
		require.NoError(t, err)
		running, last := v.Status()
		require.Nil(t, running)
		require.Nil(t, last, "no result before the first run")

		run, started := v.Start("auditor")
		require.True(t, started)
		assert.Equal(t, "auditor", run.StartedBy)
		require.NoError(t, v.Wait(f.ctx))
		running, last = v.Status()
		require.Nil(t, running)
		require.NotNil(t, last)
		assert.True(t, last.OK, "got error %q; want OK", last.Error)
		assert.True(t, last.Finished)
		assert.Equal(t, int64(25), last.Events)
		assert.Equal(t, int64(25), last.Done, "progress reached the head")
		assert.Equal(t, int64(25), last.Total)

		_, err = f.db.ExecContext(f.ctx, f.db.Rebind(`UPDATE events SET metadata = ? WHERE position = 7`), `{"actor":"mallory"}`)
		require.NoError(t, err)
		_, started = v.Start("admin")
		require.True(t, started)
		require.NoError(t, v.Wait(f.ctx))
		_, last = v.Status()
		require.NotNil(t, last)
		assert.False(t, last.OK)
		assert.Equal(t, "admin", last.StartedBy)
		assert.Contains(t, last.Error, "position 7")
	})
}

// blockingVerifier verifies nothing until released, reporting progress first.
type blockingVerifier struct {
	progressed chan struct{}
	release    chan struct{}
}

func (b *blockingVerifier) Verify(_ context.Context, _ string, progress func(done, total int64)) (*eventstore.VerifyReport, error) {
	progress(3, 10)
	close(b.progressed)
	<-b.release
	progress(10, 10)
	return &eventstore.VerifyReport{Events: 10}, nil
}

// TestLedgerVerificationOneAtATime: a second Start while one runs starts nothing and
// returns the running one, with its progress.
func TestLedgerVerificationOneAtATime(t *testing.T) {
	t.Parallel()
	b := &blockingVerifier{progressed: make(chan struct{}), release: make(chan struct{})}
	clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	v, err := app.NewLedgerVerification(b, "key", func() time.Time { return clock })
	require.NoError(t, err)
	first, started := v.Start("admin")
	require.True(t, started)
	<-b.progressed
	second, started := v.Start("auditor")
	assert.False(t, started, "a second run started while one runs")
	assert.Equal(t, "admin", second.StartedBy)
	assert.Equal(t, first.StartedAt, second.StartedAt)
	assert.Equal(t, int64(3), second.Done)
	assert.Equal(t, int64(10), second.Total)
	running, last := v.Status()
	require.NotNil(t, running)
	assert.Nil(t, last)
	close(b.release)
	require.NoError(t, v.Wait(context.Background()))
	running, last = v.Status()
	assert.Nil(t, running)
	require.NotNil(t, last)
	assert.True(t, last.OK)
	assert.Equal(t, clock, last.FinishedAt)
}

func TestNewLedgerVerificationRejectsMissingDependencies(t *testing.T) {
	t.Parallel()
	_, err := app.NewLedgerVerification(nil, "key", nil)
	assert.Error(t, err)
	_, err = app.NewLedgerVerification(&blockingVerifier{}, "", nil)
	assert.Error(t, err)
}
