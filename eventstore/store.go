// Package eventstore is mailledger's ledger: an append-only, gap-free, hash-chained event
// log with a Merkle tree over every event and signed checkpoints of its head. One SQL
// implementation serves SQLite, PostgreSQL and MySQL; storetest holds the conformance
// suite all three pass.
package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/fault"
)

// Sentinel errors of the store.
var (
	// ErrConcurrentModification means the stream's version was not the expected one:
	// another writer appended first. Nothing was written.
	ErrConcurrentModification = fault.New(fault.Conflict, "concurrent modification")
	// ErrInvalidEvent means an event or stream reference was malformed. Nothing was written.
	ErrInvalidEvent = errors.New("invalid event")
	// ErrNotFound means a position, size or checkpoint does not exist (yet).
	ErrNotFound = fault.New(fault.NotFound, "not found")
)

// Expected-version values with a special meaning for Append.
const (
	// AnyVersion skips the optimistic concurrency check.
	AnyVersion int64 = -1
	// NoStream requires that the stream has no events yet.
	NoStream int64 = 0
)

// Stream names the aggregate instance that events belong to.
type Stream struct {
	ID       string // unique across the ledger, such as "erasure-GDPR-2026-00001"
	Type     string // such as "erasure_request"
	TenantID string
}

// NewEvent is an event to append.
type NewEvent struct {
	Type          string
	SchemaVersion int
	// Payload is marshalled to JSON and canonicalized (RFC 8785) before it is stored.
	Payload  any
	Metadata domain.Metadata
}

// FromDomain wraps a domain event for Append.
func FromDomain(e domain.Event, md domain.Metadata) NewEvent {
	return NewEvent{Type: e.EventType(), SchemaVersion: e.SchemaVersion(), Payload: e, Metadata: md}
}

// Head is the state of the ledger after its last event.
type Head struct {
	Size      int64 // number of events; the last position
	ChainHash Hash
	RootHash  Hash // Merkle root over all leaves (zero when empty)
}

// Projector keeps a table in step with the log. Project runs inside the append
// transaction, so the table never lags behind the log; it must be deterministic so that a
// rebuild from the log gives the same rows.
type Projector interface {
	Name() string
	// Tables lists the tables that Project writes, emptied by a rebuild.
	Tables() []string
	Project(ctx context.Context, tx *database.Tx, rec *Record) error
}

// StatementProjector is a Projector whose writes for one append (one stream, position
// order) are plain statements, which Append sends together with its own writes: one
// round trip on PostgreSQL and MySQL. The rows must equal those of Project called on each
// record in turn (rebuilds use Project).
type StatementProjector interface {
	Projector
	AppendStatements(d database.Dialect, recs []Record) []Statement
}

// Statement is one SQL statement with ?-placeholders and its arguments.
type Statement struct {
	Query string
	Args  []any
}

// Options configure a Store.
type Options struct {
	Projectors []Projector
	Upcasters  *Upcasters
	// Clock returns the time recorded with events; time.Now when nil.
	Clock func() time.Time
	// Metrics receives append counts and durations; optional.
	Metrics AppendObserver
}

// AppendObserver is told about every committed append.
type AppendObserver interface {
	ObserveAppend(events int, d time.Duration, head int64)
}

// Store is the ledger on one SQL database.
type Store struct {
	db     *database.DB
	opts   Options
	notify *notifier
}

// New returns a Store on db, whose schema must be migrated.
func New(db *database.DB, opts Options) (*Store, error) {
	if db == nil {
		return nil, errors.New("eventstore: nil database")
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Upcasters == nil {
		opts.Upcasters = NewUpcasters()
	}
	return &Store{db: db, opts: opts, notify: newNotifier()}, nil
}

// DB returns the store's database.
func (s *Store) DB() *database.DB { return s.db }

// Projectors returns the inline projectors the store applies.
func (s *Store) Projectors() []Projector { return s.opts.Projectors }

// Upcasters returns the registry applied on read.
func (s *Store) Upcasters() *Upcasters { return s.opts.Upcasters }

func (s *Store) now() time.Time { return s.opts.Clock().UTC().Truncate(time.Microsecond) }

func validateAppend(stream Stream, expected int64, events []NewEvent) error {
	if len(events) == 0 {
		return fmt.Errorf("%w: no events", ErrInvalidEvent)
	}
	if expected < AnyVersion {
		return fmt.Errorf("%w: expected version %d", ErrInvalidEvent, expected)
	}
	for _, check := range []error{
		validText("stream id", stream.ID, 128),
		validText("stream type", stream.Type, 64),
		validText("tenant id", stream.TenantID, 64),
	} {
		if check != nil {
			return check
		}
	}
	for _, e := range events {
		if err := validText("event type", e.Type, 128); err != nil {
			return err
		}
		if e.SchemaVersion < 1 {
			return fmt.Errorf("%w: %s has schema version %d", ErrInvalidEvent, e.Type, e.SchemaVersion)
		}
	}
	return nil
}
