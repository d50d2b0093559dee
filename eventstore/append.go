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
		if isUniqueViolation(err) {
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
// rows atomically with their events). The caller must commit; subscribers are woken by
// the next append or poll.
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
			return nil, fmt.Errorf("%w: payload of %s: %v", ErrInvalidEvent, e.Type, err)
		}
		if len(payload) == 0 || payload[0] != '{' {
			return nil, fmt.Errorf("%w: payload of %s is not a JSON object", ErrInvalidEvent, e.Type)
		}
		md := lastMD
		if i == 0 || e.Metadata != events[i-1].Metadata {
			if md, err = CanonicalJSON(e.Metadata); err != nil {
				return nil, fmt.Errorf("%w: metadata: %v", ErrInvalidEvent, err)
			}
		}
		lastMD = md
		out[i] = prepared{typ: e.Type, version: e.SchemaVersion, payload: payload, metadata: md}
	}
	return out, nil
}

func (s *Store) appendTx(ctx context.Context, tx *database.Tx, stream Stream, expected int64, prep []prepared) ([]Record, error) {
	head, err := lockHead(ctx, tx)
	if err != nil {
		return nil, err
	}
	current, err := streamVersion(ctx, tx, stream.ID)
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
	if err := insertEvents(ctx, tx, recs); err != nil {
		return nil, err
	}
	if err := insertNodes(ctx, tx, nodes); err != nil {
		return nil, err
	}
	if err := saveHead(ctx, tx, head); err != nil {
		return nil, err
	}
	if err := s.projectAll(ctx, tx, recs); err != nil {
		return nil, err
	}
	return recs, nil
}

// projectAll upcasts recs and runs every projector on them: all the records at once for
// a BatchProjector, record by record for the others.
func (s *Store) projectAll(ctx context.Context, tx *database.Tx, recs []Record) error {
	for i := range recs {
		if err := s.opts.Upcasters.apply(&recs[i]); err != nil {
			return err
		}
	}
	for _, p := range s.opts.Projectors {
		if err := runProjector(ctx, tx, p, recs); err != nil {
			return err
		}
	}
	return nil
}

func runProjector(ctx context.Context, tx *database.Tx, p Projector, recs []Record) error {
	if bp, ok := p.(BatchProjector); ok {
		if err := bp.ProjectBatch(ctx, tx, recs); err != nil {
			return fmt.Errorf("projection %s at positions %d-%d: %w", p.Name(), recs[0].Position, recs[len(recs)-1].Position, err)
		}
		return nil
	}
	for i := range recs {
		if err := p.Project(ctx, tx, &recs[i]); err != nil {
			return fmt.Errorf("projection %s at position %d: %w", p.Name(), recs[i].Position, err)
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
		if id.Level > 0 {
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

func streamVersion(ctx context.Context, tx *database.Tx, streamID string) (int64, error) {
	var v sql.NullInt64
	err := tx.QueryRow(ctx, `SELECT MAX(stream_version) FROM events WHERE stream_id = ?`, streamID).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("read stream version: %w", err)
	}
	return v.Int64, nil
}

const eventColumns = `position, stream_id, stream_type, stream_version, tenant_id, event_type, schema_version, payload, metadata, recorded_at, leaf_hash, chain_hash`

func insertEvents(ctx context.Context, tx *database.Tx, recs []Record) error {
	for start := 0; start < len(recs); start += maxRowsPerInsert {
		chunk := recs[start:min(start+maxRowsPerInsert, len(recs))]
		args := make([]any, 0, len(chunk)*12)
		for i := range chunk {
			r := &chunk[i]
			args = append(args, r.Position, r.StreamID, r.StreamType, r.StreamVersion, r.TenantID,
				r.EventType, r.SchemaVersion, string(r.Payload), string(r.Metadata),
				database.TimeArg(tx.Dialect, r.RecordedAt), r.LeafHash.String(), r.ChainHash.String())
		}
		q := `INSERT INTO events (` + eventColumns + `) VALUES ` + placeholders(len(chunk), 12)
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return fmt.Errorf("insert events: %w", err)
		}
	}
	return nil
}

func insertNodes(ctx context.Context, tx *database.Tx, nodes []treeNode) error {
	for start := 0; start < len(nodes); start += maxRowsPerInsert {
		chunk := nodes[start:min(start+maxRowsPerInsert, len(nodes))]
		args := make([]any, 0, len(chunk)*3)
		for _, n := range chunk {
			args = append(args, n.level, n.index, n.hash.String())
		}
		q := `INSERT INTO merkle_nodes (level, idx, hash) VALUES ` + placeholders(len(chunk), 3)
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return fmt.Errorf("insert merkle nodes: %w", err)
		}
	}
	return nil
}

// placeholders returns "(?,?,…),(?,?,…)…" for rows rows of cols columns.
func placeholders(rows, cols int) string {
	one := "(" + strings.Repeat("?,", cols-1) + "?)"
	return strings.Repeat(one+",", rows-1) + one
}

// isUniqueViolation recognises a duplicate-key error of any of the three drivers.
func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, s := range []string{"UNIQUE constraint failed", "SQLSTATE 23505", "Error 1062", "Duplicate entry"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
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
