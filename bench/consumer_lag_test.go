// Package bench holds the Go benchmarks of docs/performance.md that need no program of
// their own; `make bench` runs them with bench/run.sh.
package bench

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/eventstore/logsub"
)

// lagEvents is how many events one iteration appends, one per transaction.
const lagEvents = 2000

// BenchmarkConsumerLag measures the consumer lag on one node: the time from an append's
// commit (Append returning) to the start of a background consumer's handler, through the
// whole path (app.Background: watermill Router, middleware, logsub.Subscriber with its
// in-process wake-up and per-event offset update). The poll interval is set to one minute,
// so polling plays no part.
//
// "paced" appends an event every 2 ms (500 events/s), a steady load below the consumer's
// capacity; "burst" appends back to back from one goroutine, so the lag also holds the
// queueing of a consumer that must keep up with the database's full write rate. Each
// iteration appends lagEvents events; p50-ms and p99-ms are over every event of the run.
// A handler that starts before Append has returned counts as 0 ms. Goal: p99 < 50 ms.
func BenchmarkConsumerLag(b *testing.B) {
	for _, d := range dbtest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			for _, mode := range []struct {
				name string
				gap  time.Duration
			}{{"paced", 2 * time.Millisecond}, {"burst", 0}} {
				b.Run(mode.name, func(b *testing.B) { benchLag(b, d, mode.gap) })
			}
		})
	}
}

func benchLag(b *testing.B, d database.Dialect, gap time.Duration) {
	store, err := eventstore.New(dbtest.Open(b, d), eventstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rec := newLagRecorder()
	bg, err := app.NewBackground(store, app.BackgroundConfig{
		Logger:     slog.New(slog.DiscardHandler),
		Subscriber: logsub.Config{PollInterval: time.Minute},
	})
	if err != nil {
		b.Fatal(err)
	}
	bg.AddHandler("lag", func(_ context.Context, r eventstore.Record) error {
		rec.started(r.Position)
		return nil
	})
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan error, 1)
	go func() { done <- bg.Run(ctx) }()
	<-bg.Running()

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		appendPaced(b, store, rec, gap)
	}
	rec.wait(b, int64(b.N*lagEvents))
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	lags := rec.lags()
	b.ReportMetric(percentile(lags, 0.50), "p50-ms")
	b.ReportMetric(percentile(lags, 0.99), "p99-ms")
	b.ReportMetric(percentile(lags, 1), "max-ms")
	b.ReportMetric(0, "ns/op")
}

// appendPaced appends lagEvents events, one per transaction, gap apart.
func appendPaced(b *testing.B, store *eventstore.Store, rec *lagRecorder, gap time.Duration) {
	s := eventstore.Stream{ID: "lag", Type: "bench_stream", TenantID: "bench"}
	next := time.Now()
	for i := 0; i < lagEvents; i++ {
		if gap > 0 {
			next = next.Add(gap)
			time.Sleep(time.Until(next))
		}
		recs, err := store.Append(b.Context(), s, eventstore.AnyVersion,
			eventstore.NewEvent{Type: "bench.lag", SchemaVersion: 1, Payload: map[string]int{"i": i}})
		if err != nil {
			b.Fatal(err)
		}
		rec.committed(recs[0].Position)
	}
}

// lagRecorder pairs each position's commit time with its handler's start time.
type lagRecorder struct {
	mu      sync.Mutex
	commits map[int64]time.Time
	starts  map[int64]time.Time
}

func newLagRecorder() *lagRecorder {
	return &lagRecorder{commits: map[int64]time.Time{}, starts: map[int64]time.Time{}}
}

func (r *lagRecorder) committed(p int64) { r.set(r.commits, p) }

func (r *lagRecorder) started(p int64) { r.set(r.starts, p) }

func (r *lagRecorder) set(m map[int64]time.Time, p int64) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := m[p]; !seen { // a redelivery keeps the first start
		m[p] = now
	}
}

// wait blocks until the handler has started for n positions.
func (r *lagRecorder) wait(b *testing.B, n int64) {
	deadline := time.Now().Add(time.Minute)
	for {
		r.mu.Lock()
		got := int64(len(r.starts))
		r.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("handler started for %d of %d events within a minute", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// lags returns every position's lag in milliseconds.
func (r *lagRecorder) lags() []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]float64, 0, len(r.commits))
	for p, c := range r.commits {
		out = append(out, max(0, float64(r.starts[p].Sub(c))/float64(time.Millisecond)))
	}
	slices.Sort(out)
	return out
}

// percentile returns the q-quantile of sorted values (nearest rank).
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
