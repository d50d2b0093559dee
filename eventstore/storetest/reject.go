package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/eventstore"
)

// ledgerState is what a refused append must leave untouched.
type ledgerState struct {
	Head        eventstore.Head
	Events      int64
	MerkleNodes int64
}

func (f *fixture) state() ledgerState {
	f.t.Helper()
	return ledgerState{Head: f.head(), Events: f.count("events"), MerkleNodes: f.count("merkle_nodes")}
}

// testInvalidInput checks that malformed appends fail with ErrInvalidEvent and write nothing.
func testInvalidInput(t *testing.T, newDB Factory) {
	f := newFixture(t, newDB, eventstore.Options{})
	f.append(stream("existing"), eventstore.NoStream, numbered(1, 3)...)
	ok := event("test.ok", map[string]any{"k": "v"})
	cases := []struct {
		name     string
		stream   eventstore.Stream
		expected int64
		events   []eventstore.NewEvent
	}{
		{"empty stream id", eventstore.Stream{Type: "t", TenantID: "x"}, eventstore.NoStream, []eventstore.NewEvent{ok}},
		{"empty stream type", eventstore.Stream{ID: "s", TenantID: "x"}, eventstore.NoStream, []eventstore.NewEvent{ok}},
		{"empty tenant id", eventstore.Stream{ID: "s", Type: "t"}, eventstore.NoStream, []eventstore.NewEvent{ok}},
		{"stream id not UTF-8", stream("bad-\xff"), eventstore.NoStream, []eventstore.NewEvent{ok}},
		{"stream id too long", stream(strings.Repeat("s", 129)), eventstore.NoStream, []eventstore.NewEvent{ok}},
		{"no events", stream("s"), eventstore.NoStream, nil},
		{"empty event type", stream("s"), eventstore.NoStream, []eventstore.NewEvent{event("", map[string]any{})}},
		{"schema version 0", stream("s"), eventstore.NoStream, []eventstore.NewEvent{withVersion(ok, 0)}},
		{"negative schema version", stream("s"), eventstore.NoStream, []eventstore.NewEvent{withVersion(ok, -1)}},
		{"array payload", stream("s"), eventstore.NoStream, []eventstore.NewEvent{event("t", []int{1, 2})}},
		{"string payload", stream("s"), eventstore.NoStream, []eventstore.NewEvent{event("t", "text")}},
		{"number payload", stream("s"), eventstore.NoStream, []eventstore.NewEvent{event("t", 42)}},
		{"null payload", stream("s"), eventstore.NoStream, []eventstore.NewEvent{event("t", nil)}},
		{"payload that cannot be marshalled", stream("s"), eventstore.NoStream, []eventstore.NewEvent{event("t", map[string]any{"c": make(chan int)})}},
		{"payload of invalid JSON", stream("s"), eventstore.NoStream, []eventstore.NewEvent{event("t", rawJSON(`{"a":`))}},
		{"second event invalid", stream("existing"), 3, []eventstore.NewEvent{ok, withVersion(ok, 0)}},
		{"expected version below AnyVersion", stream("existing"), -2, []eventstore.NewEvent{ok}},
	}
	before := f.state()
	for _, tc := range cases {
		recs, err := f.store.Append(f.ctx, tc.stream, tc.expected, tc.events...)
		assert.ErrorIs(t, err, eventstore.ErrInvalidEvent, "%s: got error %v", tc.name, err)
		assert.Empty(t, recs, "%s: records returned", tc.name)
		assert.Equal(t, before, f.state(), "%s: ledger changed by a refused append", tc.name)
	}
	got, err := f.store.Load(f.ctx, "existing")
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3}, positions(got))
	f.verify()
}

func withVersion(e eventstore.NewEvent, v int) eventstore.NewEvent {
	e.SchemaVersion = v
	return e
}

// testExpectedVersion walks one ledger through optimistic-concurrency outcomes in order:
// refusals write nothing, accepted appends continue the stream.
func testExpectedVersion(t *testing.T, newDB Factory) {
	f := newFixture(t, newDB, eventstore.Options{})
	f.append(stream("s"), eventstore.NoStream, numbered(1, 3)...)
	f.append(stream("other"), eventstore.NoStream, numbered(4, 1)...)
	steps := []struct {
		name         string
		stream       string
		expected     int64
		n            int
		wantVersions []int64 // nil: the append must fail with ErrConcurrentModification
	}{
		{"NoStream on an existing stream", "s", eventstore.NoStream, 1, nil},
		{"stale version", "s", 2, 1, nil},
		{"stale version, several events", "s", 1, 3, nil},
		{"version ahead of the stream", "s", 5, 1, nil},
		{"a version on a stream that does not exist", "new", 1, 1, nil},
		{"current version", "s", 3, 2, []int64{4, 5}},
		{"the version just used again", "s", 3, 1, nil},
		{"AnyVersion on an existing stream", "s", eventstore.AnyVersion, 1, []int64{6}},
		{"AnyVersion on a new stream", "any", eventstore.AnyVersion, 2, []int64{1, 2}},
		{"NoStream on a new stream", "fresh", eventstore.NoStream, 1, []int64{1}},
	}
	for _, st := range steps {
		before := f.state()
		recs, err := f.store.Append(f.ctx, stream(st.stream), st.expected, numbered(100, st.n)...)
		if st.wantVersions == nil {
			assert.ErrorIs(t, err, eventstore.ErrConcurrentModification, "%s: got error %v", st.name, err)
			assert.Equal(t, before, f.state(), "%s: ledger changed by a refused append", st.name)
			continue
		}
		require.NoError(t, err, st.name)
		var versions []int64
		for _, r := range recs {
			versions = append(versions, r.StreamVersion)
		}
		assert.Equal(t, st.wantVersions, versions, "%s: versions", st.name)
		assert.Equal(t, span(before.Head.Size+1, before.Head.Size+int64(st.n)), positions(recs), "%s: positions", st.name)
	}
	got, err := f.store.Load(f.ctx, "s")
	require.NoError(t, err)
	assert.Len(t, got, 6, "events in stream s")
	assert.Equal(t, int64(10), f.verify().Events)
}

// recordingObserver records the calls of an AppendObserver.
type recordingObserver struct{ calls [][2]int64 }

func (o *recordingObserver) ObserveAppend(events int, _ time.Duration, head int64) {
	o.calls = append(o.calls, [2]int64{int64(events), head})
}

// testAppendedWakesWaiters checks the in-process wake-up and the metrics hook.
func testAppendedWakesWaiters(t *testing.T, newDB Factory) {
	obs := &recordingObserver{}
	f := newFixture(t, newDB, eventstore.Options{Metrics: obs})
	woken := f.store.Appended()
	select {
	case <-woken:
		t.Fatal("Appended closed before any append")
	default:
	}
	f.append(stream("s"), eventstore.NoStream, numbered(1, 2)...)
	requireClosed(t, woken)
	next := f.store.Appended()
	_, err := f.store.Append(f.ctx, stream("s"), eventstore.NoStream, numbered(3, 1)...)
	require.True(t, errors.Is(err, eventstore.ErrConcurrentModification), "got %v; want ErrConcurrentModification", err)
	select {
	case <-next:
		t.Fatal("Appended closed by a refused append")
	default:
	}
	f.append(stream("s"), 2, numbered(3, 1)...)
	requireClosed(t, next)
	assert.Equal(t, [][2]int64{{2, 2}, {1, 3}}, obs.calls, "observed (events, head) per committed append")
}

func requireClosed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("Appended not closed 5 s after an append committed")
	}
}
