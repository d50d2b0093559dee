package eventstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/transparency-dev/merkle/compact"

	"github.com/mailledger/mailledger/database"
)

// maxRowsPerInsert bounds multi-row INSERTs well below every driver's placeholder limit.
const maxRowsPerInsert = 200

type prepared struct {
	typ      string
	version  int
	payload  []byte
	metadata []byte
}

// Append writes events to the end of stream in one transaction, if the stream's current
// version equals expected (AnyVersion skips the check). It assigns the next gap-free
// positions under the ledger-head lock, extends the hash chain and the Merkle tree, runs
// the inline projections, and commits. A lost race returns ErrConcurrentModification and
// writes nothing.
func (s *Store) Append(ctx context.Context, stream Stream, expected int64, events ...NewEvent) ([]Record, error) {
	if err := validateAppend(stream, expected, events); err != nil {
		return nil, err
	}
	prep, err := prepareEvents(events)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	var recs []Record
	err = s.db.InTx(ctx, func(tx *database.Tx) error {
		recs, err = s.appendTx(ctx, tx, stream, expected, prep)
		return err
	})
	if err != nil {
		if database.IsUniqueViolation(err) {
			return nil, fmt.Errorf("%w: stream %s", ErrConcurrentModification, stream.ID)
		}
		return nil, err
	}
	last := recs[len(recs)-1].Position
	if s.opts.Metrics != nil {
		s.opts.Metrics.ObserveAppend(len(recs), time.Since(started), last)
	}
	s.notify.broadcast(last)
	return recs, nil
}

// AppendTx is Append inside a transaction the caller owns (for use cases that write other
// rows atomically with their events). The caller must commit, then call Notify with the
// last position to wake subscribers at once (app's ledgerTx does both); otherwise they
// are woken by the next append or poll.
func (s *Store) AppendTx(ctx context.Context, tx *database.Tx, stream Stream, expected int64, events ...NewEvent) ([]Record, error) {
	if err := validateAppend(stream, expected, events); err != nil {
		return nil, err
	}
	prep, err := prepareEvents(events)
	if err != nil {
		return nil, err
	}
	return s.appendTx(ctx, tx, stream, expected, prep)
}

func prepareEvents(events []NewEvent) ([]prepared, error) {
	out := make([]prepared, len(events))
	var lastMD []byte // the events of one append usually share their metadata
	for i, e := range events {
		payload, err := CanonicalJSON(e.Payload)
		if err != nil {
			return nil, fmt.Errorf("%w: payload of %s: %w", ErrInvalidEvent, e.Type, err)
		}
		if len(payload) == 0 || payload[0] != '{' {
			return nil, fmt.Errorf("%w: payload of %s is not a JSON object", ErrInvalidEvent, e.Type)
		}
		md := lastMD
		if i == 0 || e.Metadata != events[i-1].Metadata {
			if md, err = CanonicalJSON(e.Metadata); err != nil {
				return nil, fmt.Errorf("%w: metadata: %w", ErrInvalidEvent, err)
			}
		}
		lastMD = md
		out[i] = prepared{typ: e.Type, version: e.SchemaVersion, payload: payload, metadata: md}
	}
	return out, nil
}

func (s *Store) appendTx(ctx context.Context, tx *database.Tx, stream Stream, expected int64, prep []prepared) ([]Record, error) {
	head, current, err := lockHeadAndVersion(ctx, tx, stream.ID)
	if err != nil {
		return nil, err
	}
	if expected != AnyVersion && current != expected {
		return nil, fmt.Errorf("%w: stream %s is at version %d, expected %d", ErrConcurrentModification, stream.ID, current, expected)
	}
	recs, nodes, err := s.buildRecords(head, stream, current, prep)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		if err := s.opts.Upcasters.apply(&recs[i]); err != nil {
			return nil, err
		}
	}
	stmts := append(append(eventInserts(tx.Dialect, recs), nodeInserts(nodes)...), headUpdate(tx.Dialect, head))
	for _, p := range s.opts.Projectors {
		if sp, ok := p.(StatementProjector); ok {
			stmts = append(stmts, sp.AppendStatements(tx.Dialect, recs)...)
		}
	}
	if err := execAll(ctx, tx, stmts); err != nil {
		return nil, err
	}
	if err := s.projectOthers(ctx, tx, recs); err != nil {
		return nil, err
	}
	return recs, nil
}

// projectOthers runs the projectors that are not StatementProjectors, record by record.
func (s *Store) projectOthers(ctx context.Context, tx *database.Tx, recs []Record) error {
	for _, p := range s.opts.Projectors {
		if _, ok := p.(StatementProjector); ok {
			continue
		}
		for i := range recs {
			if err := p.Project(ctx, tx, &recs[i]); err != nil {
				return fmt.Errorf("projection %s at position %d: %w", p.Name(), recs[i].Position, err)
			}
		}
	}
	return nil
}

// buildRecords numbers, hashes and chains the new events and extends head's Merkle range,
// collecting the completed interior nodes to store.
func (s *Store) buildRecords(head *headState, stream Stream, current int64, prep []prepared) ([]Record, []treeNode, error) {
	now := s.now()
	recs := make([]Record, len(prep))
	var nodes []treeNode
	visit := func(id compact.NodeID, hash []byte) {
		if id.Level >= minStoredLevel {
			nodes = append(nodes, treeNode{level: id.Level, index: id.Index, hash: toHash(hash)})
		}
	}
	for i, p := range prep {
		r := &recs[i]
		*r = Record{
			Position: head.size + 1, StreamID: stream.ID, StreamType: stream.Type,
			StreamVersion: current + int64(i) + 1, TenantID: stream.TenantID,
			EventType: p.typ, SchemaVersion: p.version, Payload: p.payload, Metadata: p.metadata,
			RecordedAt: now,
		}
		r.LeafHash = r.ComputeLeafHash()
		r.ChainHash = NextChainHash(head.chain, r.LeafHash)
		if err := head.tree.Append(r.LeafHash[:], visit); err != nil {
			return nil, nil, fmt.Errorf("merkle append: %w", err)
		}
		head.size, head.chain = r.Position, r.ChainHash
	}
	return recs, nodes, nil
}

// lockHeadAndVersion takes the ledger-head lock, then reads the stream's version. On MySQL
// both statements go in one round trip: the server runs them in order, so the version is
// read (with a fresh READ COMMITTED snapshot) only once the lock is held. PostgreSQL cannot
// send two statements with arguments at once, and SQLite has no round trips.
func lockHeadAndVersion(ctx context.Context, tx *database.Tx, streamID string) (*headState, int64, error) {
	if tx.Dialect != database.MySQL {
		head, err := lockHead(ctx, tx)
		if err != nil {
			return nil, 0, err
		}
		v, err := streamVersion(ctx, tx, streamID)
		return head, v, err
	}
	rows, err := tx.Query(ctx, `SELECT size, chain_hash, merkle_state FROM ledger_head WHERE id = 1 FOR UPDATE; SELECT MAX(stream_version) FROM events WHERE stream_id = ?`, streamID)
	if err != nil {
		return nil, 0, fmt.Errorf("lock ledger head: %w", err)
	}
	defer rows.Close()
	var size int64
	var chain, state string
	if !rows.Next() {
		return nil, 0, errors.Join(errNoHead, rows.Err())
	}
	if err := rows.Scan(&size, &chain, &state); err != nil {
		return nil, 0, fmt.Errorf("lock ledger head: %w", err)
	}
	var v sql.NullInt64
	if !rows.NextResultSet() || !rows.Next() {
		return nil, 0, fmt.Errorf("read stream version: %w", errors.Join(errors.New("no result"), rows.Err()))
	}
	if err := rows.Scan(&v); err != nil {
		return nil, 0, fmt.Errorf("read stream version: %w", err)
	}
	head, err := decodeHead(size, chain, state)
	return head, v.Int64, err
}

func streamVersion(ctx context.Context, tx *database.Tx, streamID string) (int64, error) {
	var v sql.NullInt64
	err := tx.QueryRow(ctx, `SELECT MAX(stream_version) FROM events WHERE stream_id = ?`, streamID).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("read stream version: %w", err)
	}
	return v.Int64, nil
}

const eventColumns = `position, stream_id, stream_type, stream_version, tenant_id, event_type, schema_version, payload, metadata, recorded_at, leaf_hash, chain_hash`

func eventInserts(d database.Dialect, recs []Record) []Statement {
	var out []Statement
	for start := 0; start < len(recs); start += maxRowsPerInsert {
		chunk := recs[start:min(start+maxRowsPerInsert, len(recs))]
		args := make([]any, 0, len(chunk)*12)
		for i := range chunk {
			r := &chunk[i]
			args = append(args, r.Position, r.StreamID, r.StreamType, r.StreamVersion, r.TenantID,
				r.EventType, r.SchemaVersion, string(r.Payload), string(r.Metadata),
				database.TimeArg(d, r.RecordedAt), r.LeafHash.String(), r.ChainHash.String())
		}
		out = append(out, Statement{`INSERT INTO events (` + eventColumns + `) VALUES ` + database.Placeholders(len(chunk), 12), args})
	}
	return out
}

func nodeInserts(nodes []treeNode) []Statement {
	var out []Statement
	for start := 0; start < len(nodes); start += maxRowsPerInsert {
		chunk := nodes[start:min(start+maxRowsPerInsert, len(nodes))]
		args := make([]any, 0, len(chunk)*3)
		for _, n := range chunk {
			args = append(args, n.level, n.index, n.hash.String())
		}
		out = append(out, Statement{`INSERT INTO merkle_nodes (level, idx, hash) VALUES ` + database.Placeholders(len(chunk), 3), args})
	}
	return out
}

// execAll runs the append's writes in as few round trips as the dialect allows: one
// statement with data-modifying CTEs on PostgreSQL, one multi-statement call on MySQL,
// one by one on SQLite (which has no round trips).
func execAll(ctx context.Context, tx *database.Tx, stmts []Statement) error {
	var err error
	switch tx.Dialect {
	case database.Postgres:
		q, args := joinCTE(stmts)
		_, err = tx.Exec(ctx, q, args...)
	case database.MySQL:
		q, args := joinMulti(stmts)
		_, err = tx.Exec(ctx, q, args...)
	default:
		for _, st := range stmts {
			if _, err = tx.Exec(ctx, st.Query, st.Args...); err != nil {
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("write events: %w", err)
	}
	return nil
}

func joinCTE(stmts []Statement) (string, []any) {
	var b strings.Builder
	var args []any
	for i, st := range stmts[:len(stmts)-1] {
		if i == 0 {
			b.WriteString("WITH ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "w%d AS (%s)", i, st.Query)
		args = append(args, st.Args...)
	}
	last := stmts[len(stmts)-1]
	b.WriteString(" " + last.Query)
	return b.String(), append(args, last.Args...)
}

func joinMulti(stmts []Statement) (string, []any) {
	qs := make([]string, len(stmts))
	var args []any
	for i, st := range stmts {
		qs[i] = st.Query
		args = append(args, st.Args...)
	}
	return strings.Join(qs, "; "), args
}

// MarshalJSON gives a record's API form: payload and metadata as JSON objects, hashes hex.
func (r Record) MarshalJSON() ([]byte, error) {
	type wire struct {
		Position      int64           `json:"position"`
		StreamID      string          `json:"stream_id"`
		StreamType    string          `json:"stream_type"`
		StreamVersion int64           `json:"stream_version"`
		TenantID      string          `json:"tenant_id"`
		EventType     string          `json:"event_type"`
		SchemaVersion int             `json:"schema_version"`
		Payload       json.RawMessage `json:"payload"`
		Metadata      json.RawMessage `json:"metadata"`
		RecordedAt    string          `json:"recorded_at"`
		LeafHash      string          `json:"leaf_hash"`
		ChainHash     string          `json:"chain_hash"`
	}
	return json.Marshal(wire{r.Position, r.StreamID, r.StreamType, r.StreamVersion, r.TenantID,
		r.EventType, r.SchemaVersion, r.Payload, r.Metadata, r.RecordedAt.UTC().Format(TimeFormat),
		r.LeafHash.String(), r.ChainHash.String()})
}

var errNoHead = errors.New("ledger_head row missing: run mailledger migrate")
