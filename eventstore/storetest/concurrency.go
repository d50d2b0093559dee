package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/mailledger/mailledger/eventstore"
)

// The distinct-streams load: writers goroutines, each appending perWriter single-event
// transactions to a stream of its own.
const (
	writers   = 16
	perWriter = 500
)

// testConcurrentDistinctStreams checks that concurrent writers get gap-free positions
// 1..writers×perWriter, every stream's versions in order, and a chain that verifies.
func testConcurrentDistinctStreams(t *testing.T, newDB Factory) {
	f := newFixture(t, newDB, eventstore.Options{})
	started := time.Now()
	g, ctx := errgroup.WithContext(f.ctx)
	for w := range writers {
		g.Go(func() error { return appendSeries(ctx, f.store, w) })
	}
	require.NoError(t, g.Wait())
	t.Logf("%d writers × %d appends in %v", writers, perWriter, time.Since(started).Round(time.Millisecond))

	const total = writers * perWriter
	recs := f.readAll()
	require.Len(t, recs, total, "events in the log")
	versions := map[string]int64{}
	for i, r := range recs {
		require.Equal(t, int64(i+1), r.Position, "got position %d at index %d; want %d (a gap or a duplicate)", r.Position, i, i+1)
		versions[r.StreamID]++
		require.Equal(t, versions[r.StreamID], r.StreamVersion, "position %d: got version %d of %s; want %d", r.Position, r.StreamVersion, r.StreamID, versions[r.StreamID])
	}
	assert.Len(t, versions, writers, "streams")
	for id, v := range versions {
		assert.Equal(t, int64(perWriter), v, "events in %s", id)
	}
	assert.Equal(t, int64(total), f.head().Size, "head size")
	started = time.Now()
	assert.Equal(t, int64(total), f.verify().Events, "events verified")
	t.Logf("verify of %d events in %v", total, time.Since(started).Round(time.Millisecond))
}

// appendSeries appends perWriter events one by one to writer w's stream, each at the
// version the previous one left.
func appendSeries(ctx context.Context, store *eventstore.Store, w int) error {
	s := stream(fmt.Sprintf("writer-%02d", w))
	for v := range int64(perWriter) {
		e := event("test.concurrent", map[string]any{"writer": w, "n": v + 1})
		if _, err := store.Append(ctx, s, v, e); err != nil {
			return fmt.Errorf("writer %d, append %d: %w", w, v+1, err)
		}
	}
	return nil
}

// The one-stream race: racers goroutines append at the same expected version, rounds times.
const (
	racers = 20
	rounds = 3
)

// testConcurrentOneStream checks that of racers appends at the same expected version
// exactly one wins and the others get ErrConcurrentModification, round after round.
func testConcurrentOneStream(t *testing.T, newDB Factory) {
	f := newFixture(t, newDB, eventstore.Options{})
	s := stream("contended")
	f.append(s, eventstore.NoStream, numbered(1, 1)...)
	for round := range int64(rounds) {
		expected := round + 1
		errs := race(f.ctx, f.store, s, expected)
		var won int
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, eventstore.ErrConcurrentModification):
				t.Errorf("round %d, racer %d: got error %v; want nil or ErrConcurrentModification", round, i, err)
			}
		}
		assert.Equal(t, 1, won, "round %d: got %d winners; want exactly 1", round, won)
		got, err := f.store.Load(f.ctx, s.ID)
		require.NoError(t, err)
		require.Len(t, got, int(expected)+1, "round %d: events in the stream", round)
		assert.Equal(t, expected+1, f.head().Size, "round %d: head size", round)
	}
	f.verify()
}

// race starts racers appends at once and returns their errors.
func race(ctx context.Context, store *eventstore.Store, s eventstore.Stream, expected int64) []error {
	errs := make([]error, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			<-start
			_, errs[i] = store.Append(ctx, s, expected, event("test.raced", map[string]any{"racer": i}))
		})
	}
	close(start)
	wg.Wait()
	return errs
}
