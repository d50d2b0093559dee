package eventstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/database"
)

func timeNow() time.Time { return time.Now().UTC() }

const selectEvents = `SELECT ` + eventColumns + ` FROM events `

// Load returns every event of a stream in version order, upcast.
func (s *Store) Load(ctx context.Context, streamID string) ([]Record, error) {
	return s.query(ctx, true, selectEvents+`WHERE stream_id = ? ORDER BY stream_version`, streamID)
}

// ReadAll returns up to limit events with position > after, in position order, upcast.
func (s *Store) ReadAll(ctx context.Context, after int64, limit int) ([]Record, error) {
	if limit <= 0 {
		limit = 1000
	}
	return s.query(ctx, true, selectEvents+`WHERE position > ? ORDER BY position LIMIT ?`, after, limit)
}

// ReadRaw is ReadAll without upcasting: the records exactly as stored.
func (s *Store) ReadRaw(ctx context.Context, after int64, limit int) ([]Record, error) {
	return s.query(ctx, false, selectEvents+`WHERE position > ? ORDER BY position LIMIT ?`, after, limit)
}

// ReadPositions returns the events at the given positions, as stored, in position order.
func (s *Store) ReadPositions(ctx context.Context, positions []int64) ([]Record, error) {
	if len(positions) == 0 {
		return nil, nil
	}
	args := make([]any, len(positions))
	for i, p := range positions {
		args[i] = p
	}
	q := selectEvents + `WHERE position IN (` + database.InList(len(positions)) + `) ORDER BY position`
	return s.query(ctx, false, q, args...)
}

func (s *Store) query(ctx context.Context, upcast bool, q string, args ...any) ([]Record, error) {
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		if err := scanRecord(rows, &r); err != nil {
			return nil, err
		}
		if upcast {
			if err := s.opts.Upcasters.apply(&r); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scanRecord(rows *sql.Rows, r *Record) error {
	var payload, metadata, leaf, chain string
	var recorded any
	err := rows.Scan(&r.Position, &r.StreamID, &r.StreamType, &r.StreamVersion, &r.TenantID,
		&r.EventType, &r.SchemaVersion, &payload, &metadata, &recorded, &leaf, &chain)
	if err != nil {
		return fmt.Errorf("scan event: %w", err)
	}
	r.Payload, r.Metadata = []byte(payload), []byte(metadata)
	if r.RecordedAt, err = database.TimeValue(recorded); err != nil {
		return fmt.Errorf("event %d recorded_at: %w", r.Position, err)
	}
	if r.LeafHash, err = ParseHash(leaf); err != nil {
		return fmt.Errorf("event %d leaf_hash: %w", r.Position, err)
	}
	if r.ChainHash, err = ParseHash(chain); err != nil {
		return fmt.Errorf("event %d chain_hash: %w", r.Position, err)
	}
	r.Data, r.DataVersion = r.Payload, r.SchemaVersion
	return nil
}

// ReadAllTx is ReadAll inside tx (used by projection rebuilds).
func (s *Store) ReadAllTx(ctx context.Context, tx *database.Tx, after int64, limit int) ([]Record, error) {
	return s.queryTx(ctx, tx, selectEvents+`WHERE position > ? ORDER BY position LIMIT ?`, after, limit)
}

// LoadTx is Load inside tx. After LockHead in the same tx no append can change the stream
// before tx ends, so a decision taken on what LoadTx returns cannot lose a race.
func (s *Store) LoadTx(ctx context.Context, tx *database.Tx, streamID string) ([]Record, error) {
	return s.queryTx(ctx, tx, selectEvents+`WHERE stream_id = ? ORDER BY stream_version`, streamID)
}

// StreamTx returns the events of a stream up to version through (inclusive) inside tx, in
// version order, exactly as stored (not upcast). It is for projectors, which hold the
// append's transaction but not the Store: the events of the append being projected are
// already in it.
func StreamTx(ctx context.Context, tx *database.Tx, streamID string, through int64) ([]Record, error) {
	return readTx(ctx, tx, selectEvents+`WHERE stream_id = ? AND stream_version <= ? ORDER BY stream_version`, streamID, through)
}

// queryTx reads records inside tx, upcast.
func (s *Store) queryTx(ctx context.Context, tx *database.Tx, q string, args ...any) ([]Record, error) {
	out, err := readTx(ctx, tx, q, args...)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if err := s.opts.Upcasters.apply(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readTx reads records inside tx, as stored.
func readTx(ctx context.Context, tx *database.Tx, q string, args ...any) ([]Record, error) {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		if err := scanRecord(rows, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// EventFilter selects events for Events: of one tenant (empty: every tenant's), of one
// stream and of one type when set, from position From on (inclusive), at most Limit.
type EventFilter struct {
	Tenant, StreamID, Type string
	From                   int64
	Limit                  int
}

// Events returns the events f selects in position order, exactly as stored (the form
// their hashes cover).
func (s *Store) Events(ctx context.Context, f EventFilter) ([]Record, error) {
	q, args := selectEvents+`WHERE position >= ?`, []any{f.From}
	for _, c := range []struct{ col, v string }{{"tenant_id", f.Tenant}, {"stream_id", f.StreamID}, {"event_type", f.Type}} {
		if c.v != "" {
			q, args = q+` AND `+c.col+` = ?`, append(args, c.v)
		}
	}
	return s.query(ctx, false, q+` ORDER BY position LIMIT ?`, append(args, f.Limit)...)
}
