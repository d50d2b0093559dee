package app_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/eventstore/logsub"
)

// ledgerFixture is a store on a fresh database of one dialect.
type ledgerFixture struct {
	t     *testing.T
	ctx   context.Context
	db    *database.DB
	store *eventstore.Store
}

func newLedgerFixture(t *testing.T, d database.Dialect) *ledgerFixture {
	t.Helper()
	db := dbtest.Open(t, d)
	store, err := eventstore.New(db, eventstore.Options{})
	require.NoError(t, err)
	return &ledgerFixture{t: t, ctx: t.Context(), db: db, store: store}
}

// appendEvents appends n events in batches of up to 10.
func (f *ledgerFixture) appendEvents(n int) {
	f.t.Helper()
	for done := 0; done < n; {
		batch := make([]eventstore.NewEvent, min(10, n-done))
		for i := range batch {
			batch[i] = eventstore.NewEvent{Type: "app.tested", SchemaVersion: 1, Payload: map[string]any{"i": done + i}}
		}
		s := eventstore.Stream{ID: fmt.Sprintf("bg-%d", done%3), Type: "test_stream", TenantID: "t"}
		_, err := f.store.Append(f.ctx, s, eventstore.AnyVersion, batch...)
		require.NoError(f.t, err)
		done += len(batch)
	}
}

func (f *ledgerFixture) background(cfg app.BackgroundConfig) *app.Background {
	f.t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	bg, err := app.NewBackground(f.store, cfg)
	require.NoError(f.t, err)
	return bg
}

// run starts bg and returns the function that stops it and checks Run's result.
func (f *ledgerFixture) run(bg *app.Background) func() {
	f.t.Helper()
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- bg.Run(ctx) }()
	select {
	case <-bg.Running():
	case err := <-done:
		f.t.Fatalf("background stopped at start: %v", err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			require.NoError(f.t, err, "Run")
		case <-time.After(20 * time.Second):
			f.t.Fatal("Run did not return after its context ended")
		}
	}
	f.t.Cleanup(stop)
	return stop
}

func (f *ledgerFixture) offset(consumer string) int64 {
	f.t.Helper()
	p, err := logsub.Offset(f.ctx, f.db, consumer)
	require.NoError(f.t, err)
	return p
}

func (f *ledgerFixture) awaitOffset(consumer string, want int64) {
	f.t.Helper()
	require.Eventually(f.t, func() bool { return f.offset(consumer) == want }, 20*time.Second, 5*time.Millisecond,
		"offset of %s never reached %d", consumer, want)
}

// positionLog records the positions a handler saw.
type positionLog struct {
	mu   sync.Mutex
	seen []int64
}

func (l *positionLog) add(p int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, p)
	n := 0
	for _, q := range l.seen {
		if q == p {
			n++
		}
	}
	return n
}

func (l *positionLog) positions() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64(nil), l.seen...)
}

func TestBackgroundDeliversInOrder(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newLedgerFixture(t, d)
		f.appendEvents(25)
		var log positionLog
		bg := f.background(app.BackgroundConfig{})
		bg.AddHandler("recorder", func(_ context.Context, rec eventstore.Record) error {
			log.add(rec.Position)
			return nil
		})
		stop := f.run(bg)
		f.appendEvents(5)
		f.awaitOffset("recorder", 30)
		stop()
		want := make([]int64, 30)
		for i := range want {
			want[i] = int64(i + 1)
		}
		assert.Equal(t, want, log.positions())
	})
}

var errPicky = errors.New("picky handler refuses")

// TestBackgroundRetriesThenPoisons: a handler that fails or panics is retried, then its
// event is recorded in consumer_poison and the consumer goes on; a transient failure is
// only retried.
func TestBackgroundRetriesThenPoisons(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newLedgerFixture(t, d)
		f.appendEvents(5)
		reg := prometheus.NewPedanticRegistry()
		var log positionLog
		bg := f.background(app.BackgroundConfig{MaxRetries: 2, RetryInterval: 5 * time.Millisecond, Registerer: reg})
		bg.AddHandler("picky", func(_ context.Context, rec eventstore.Record) error {
			attempt := log.add(rec.Position)
			switch {
			case rec.Position == 2:
				return errPicky
			case rec.Position == 3 && attempt == 1:
				return errors.New("transient")
			case rec.Position == 4:
				panic("four is unlucky")
			}
			return nil
		})
		f.run(bg)
		f.awaitOffset("picky", 5)
		assert.Equal(t, []int64{1, 2, 2, 2, 3, 3, 4, 4, 4, 5}, log.positions(), "attempts: 1 + 2 retries when failing")
		rows, err := logsub.Poisoned(f.ctx, f.db, "picky")
		require.NoError(t, err)
		require.Len(t, rows, 2)
		assert.Equal(t, int64(2), rows[0].Position)
		assert.Contains(t, rows[0].Error, errPicky.Error())
		assert.Equal(t, int64(4), rows[1].Position)
		assert.Contains(t, rows[1].Error, "four is unlucky")
		assert.Equal(t, 3.0, metricValue(t, reg, "mailledger_consumer_handled_total", "picky"))
		assert.Equal(t, 7.0, metricValue(t, reg, "mailledger_consumer_failures_total", "picky"), "3 + 1 + 3 failed attempts")
		assert.Equal(t, 2.0, metricValue(t, reg, "mailledger_consumer_poisoned_total", "picky"))
	})
}

// TestBackgroundShutdownFinishesInFlight: cancelling Run lets the event in flight finish
// with a live context, saves its offset, and delivers nothing more.
func TestBackgroundShutdownFinishesInFlight(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newLedgerFixture(t, d)
		f.appendEvents(3)
		started, release := make(chan struct{}), make(chan struct{})
		var log positionLog
		bg := f.background(app.BackgroundConfig{})
		bg.AddHandler("slow", func(ctx context.Context, rec eventstore.Record) error {
			log.add(rec.Position)
			if rec.Position == 2 {
				close(started)
				<-release
			}
			return ctx.Err()
		})
		stop := f.run(bg)
		<-started
		stopped := make(chan struct{})
		go func() { stop(); close(stopped) }()
		select {
		case <-stopped:
			t.Fatal("Run returned before the event in flight finished")
		case <-time.After(200 * time.Millisecond):
		}
		close(release)
		<-stopped
		assert.Equal(t, int64(2), f.offset("slow"))
		assert.Equal(t, []int64{1, 2}, log.positions())
		rows, err := logsub.Poisoned(f.ctx, f.db, "slow")
		require.NoError(t, err)
		assert.Empty(t, rows)
	})
}

// TestBackgroundShutdownGivesUp: a handler that outlives CloseTimeout sees its context
// cancelled; its event is neither acked nor poisoned, so the next start delivers it again.
func TestBackgroundShutdownGivesUp(t *testing.T) {
	f := newLedgerFixture(t, database.SQLite)
	f.appendEvents(2)
	started := make(chan struct{})
	bg := f.background(app.BackgroundConfig{CloseTimeout: 200 * time.Millisecond})
	bg.AddHandler("stuck", func(ctx context.Context, rec eventstore.Record) error {
		if rec.Position == 2 {
			close(started)
			<-ctx.Done()
		}
		return ctx.Err()
	})
	stop := f.run(bg)
	<-started
	begin := time.Now()
	stop()
	assert.Less(t, time.Since(begin), 5*time.Second)
	assert.Equal(t, int64(1), f.offset("stuck"))
	rows, err := logsub.Poisoned(f.ctx, f.db, "stuck")
	require.NoError(t, err)
	assert.Empty(t, rows, "an event interrupted by shutdown is not poisoned")

	var log positionLog
	again := f.background(app.BackgroundConfig{})
	again.AddHandler("stuck", func(_ context.Context, rec eventstore.Record) error { log.add(rec.Position); return nil })
	f.run(again)
	f.awaitOffset("stuck", 2)
	assert.Equal(t, []int64{2}, log.positions())
}

func TestBackgroundMetrics(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newLedgerFixture(t, d)
		f.appendEvents(6)
		reg := prometheus.NewPedanticRegistry()
		started, release := make(chan struct{}), make(chan struct{})
		bg := f.background(app.BackgroundConfig{Registerer: reg})
		bg.AddHandler("metered", func(_ context.Context, rec eventstore.Record) error {
			if rec.Position == 4 {
				close(started)
				<-release
			}
			return nil
		})
		f.run(bg)
		<-started
		f.awaitOffset("metered", 3)
		// The gauges follow the saved offset just after the row is written.
		require.Eventually(t, func() bool {
			return metricValue(t, reg, "mailledger_consumer_position", "metered") == 3
		}, 5*time.Second, 5*time.Millisecond, "position gauge")
		assert.Equal(t, 3.0, metricValue(t, reg, "mailledger_consumer_lag_events", "metered"))
		assert.Equal(t, 3.0, metricValue(t, reg, "mailledger_consumer_handled_total", "metered"))
		assert.Equal(t, 4.0, metricValue(t, reg, "mailledger_consumer_delay_seconds", "metered"), "delays observed")
		close(release)
		f.awaitOffset("metered", 6)
		require.Eventually(t, func() bool {
			return metricValue(t, reg, "mailledger_consumer_lag_events", "metered") == 0
		}, 5*time.Second, 5*time.Millisecond)
		require.Eventually(t, func() bool {
			return metricValue(t, reg, "mailledger_consumer_position", "metered") == 6
		}, 5*time.Second, 5*time.Millisecond, "position gauge")
		assert.Equal(t, 0.0, metricValue(t, reg, "mailledger_consumer_failures_total", "metered"))
	})
}

func TestBackgroundConfig(t *testing.T) {
	t.Parallel()
	err := app.BackgroundConfig{MaxRetries: -1, RetryInterval: -1, CloseTimeout: -1,
		Subscriber: logsub.Config{PollInterval: -1}}.Validate()
	require.Error(t, err)
	for _, want := range []string{"max retries", "retry interval", "close timeout", "poll interval"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NoError(t, app.BackgroundConfig{}.Validate())
	_, err = app.NewBackground(nil, app.BackgroundConfig{})
	assert.Error(t, err)

	f := newLedgerFixture(t, database.SQLite)
	reg := prometheus.NewRegistry()
	bg := f.background(app.BackgroundConfig{Registerer: reg})
	_, err = app.NewBackground(f.store, app.BackgroundConfig{Registerer: reg})
	assert.Error(t, err, "metrics registered twice")
	assert.Panics(t, func() { bg.AddHandler("nil", nil) })
	bg.AddHandler("once", func(context.Context, eventstore.Record) error { return nil })
	assert.Panics(t, func() { bg.AddHandler("once", func(context.Context, eventstore.Record) error { return nil }) })
}

// metricValue returns the value of a counter or gauge, or the sample count of a
// histogram, of name for consumer.
func metricValue(t *testing.T, g prometheus.Gatherer, name, consumer string) float64 {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != consumer {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	t.Fatalf("metric %s{consumer=%q} not found", name, consumer)
	return 0
}
