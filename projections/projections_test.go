package projections_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

// streamRow is one row of ledger_streams.
type streamRow struct {
	ID, Type, Tenant     string
	Version, First, Last int64
	LastEventType        string
	CreatedAt, UpdatedAt time.Time
}

func readStreams(t *testing.T, db *database.DB) []streamRow {
	t.Helper()
	rows, err := db.Query(`SELECT stream_id, stream_type, tenant_id, version, first_position, last_position, last_event_type, created_at, updated_at FROM ledger_streams ORDER BY stream_id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []streamRow
	for rows.Next() {
		var r streamRow
		var created, updated any
		require.NoError(t, rows.Scan(&r.ID, &r.Type, &r.Tenant, &r.Version, &r.First, &r.Last, &r.LastEventType, &created, &updated))
		r.CreatedAt, err = database.TimeValue(created)
		require.NoError(t, err)
		r.UpdatedAt, err = database.TimeValue(updated)
		require.NoError(t, err)
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

// tickingClock returns 10:00:00, 10:00:01, … on 1 March 2026, one second per call.
func tickingClock() func() time.Time {
	next := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	return func() time.Time {
		now := next
		next = next.Add(time.Second)
		return now
	}
}

func ev(typ string) eventstore.NewEvent {
	return eventstore.NewEvent{Type: typ, SchemaVersion: 1, Payload: map[string]string{"k": "v"}, Metadata: domain.Metadata{Actor: "test"}}
}

// TestStreamsRows checks the values of ledger_streams after a known sequence of appends,
// live and rebuilt.
func TestStreamsRows(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db := dbtest.Open(t, d)
		store, err := eventstore.New(db, eventstore.Options{Projectors: projections.All(), Clock: tickingClock()})
		require.NoError(t, err)
		a := eventstore.Stream{ID: "case-1", Type: "test_case", TenantID: "acme"}
		b := eventstore.Stream{ID: "hold-1", Type: "test_hold", TenantID: "globex"}
		for _, step := range []struct {
			s        eventstore.Stream
			expected int64
			events   []eventstore.NewEvent
		}{
			{a, eventstore.NoStream, []eventstore.NewEvent{ev("case.opened"), ev("case.assessed")}}, // 10:00:00
			{b, eventstore.NoStream, []eventstore.NewEvent{ev("hold.placed")}},                      // 10:00:01
			{a, 2, []eventstore.NewEvent{ev("case.approved")}},                                      // 10:00:02
		} {
			_, err := store.Append(ctx, step.s, step.expected, step.events...)
			require.NoError(t, err)
		}
		at := func(sec int) time.Time { return time.Date(2026, 3, 1, 10, 0, sec, 0, time.UTC) }
		want := []streamRow{
			{"case-1", "test_case", "acme", 3, 1, 4, "case.approved", at(0), at(2)},
			{"hold-1", "test_hold", "globex", 1, 3, 3, "hold.placed", at(1), at(1)},
		}
		assert.Equal(t, want, readStreams(t, db), "live rows")
		n, err := projections.Rebuild(ctx, store, nil)
		require.NoError(t, err)
		assert.Equal(t, int64(4), n, "events replayed")
		assert.Equal(t, want, readStreams(t, db), "rebuilt rows")
	})
}

// failingProjector fails once armed.
type failingProjector struct{ armed bool }

var errArmed = errors.New("projector armed to fail")

func (*failingProjector) Name() string     { return "failing" }
func (*failingProjector) Tables() []string { return nil }
func (p *failingProjector) Project(context.Context, *database.Tx, *eventstore.Record) error {
	if p.armed {
		return errArmed
	}
	return nil
}

// TestRebuildFailureKeepsOldRows checks that a rebuild that fails part-way leaves the
// tables as they were, and that a failing projector makes the append fail and write nothing.
func TestRebuildFailureKeepsOldRows(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db := dbtest.Open(t, d)
		failing := &failingProjector{}
		store, err := eventstore.New(db, eventstore.Options{Projectors: append(projections.All(), failing)})
		require.NoError(t, err)
		s := eventstore.Stream{ID: "s", Type: "t", TenantID: "x"}
		_, err = store.Append(ctx, s, eventstore.NoStream, ev("a"), ev("b"))
		require.NoError(t, err)
		_, err = db.Exec(`UPDATE ledger_streams SET version = 99`)
		require.NoError(t, err)
		before := readStreams(t, db)

		failing.armed = true
		_, err = projections.Rebuild(ctx, store, nil)
		assert.ErrorIs(t, err, errArmed, "rebuild")
		assert.Equal(t, before, readStreams(t, db), "rows after a failed rebuild; want the old rows")
		_, err = store.Append(ctx, s, 2, ev("c"))
		assert.ErrorIs(t, err, errArmed, "append through a failing projector")
		head, err := store.Head(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), head.Size, "head after a failed projection; want nothing written")
		assert.Equal(t, before, readStreams(t, db), "rows after a failed append")
	})
}

// TestAllTablesExist checks that every projector is named once and its tables exist in
// the migrated schema of every dialect.
func TestAllTablesExist(t *testing.T) {
	names := map[string]bool{}
	for _, p := range projections.All() {
		assert.False(t, names[p.Name()], "projector %s listed twice", p.Name())
		names[p.Name()] = true
		assert.NotEmpty(t, p.Tables(), "projector %s lists no table", p.Name())
	}
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		db := dbtest.Open(t, d)
		store, err := eventstore.New(db, eventstore.Options{Projectors: projections.All()})
		require.NoError(t, err)
		n, err := projections.Rebuild(context.Background(), store, nil)
		require.NoError(t, err, "rebuild of an empty ledger empties every table")
		assert.Zero(t, n)
		for _, p := range projections.All() {
			for _, table := range p.Tables() {
				var rows int64
				require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM `+table).Scan(&rows), "table %s", table)
				assert.Zero(t, rows, "rows in %s of an empty ledger", table)
			}
		}
	})
}
