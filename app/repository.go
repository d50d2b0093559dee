package app

import (
	"context"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
)

// aggregate is a pointer to the state of one aggregate instance (*erasure.Request,
// *export.Job, *legalhold.Hold). Apply moves the state by one event recorded at at and
// counts the aggregate's version.
type aggregate[S any] interface {
	*S
	Apply(e domain.Event, at time.Time)
}

// repository loads the aggregates of one type from their streams and appends their
// events: the use cases' one load → decide → append. A load replays the stream's events,
// upcast, through the aggregate's decode and Apply; an append at the version the caller
// loaded loses a race as eventstore.ErrConcurrentModification. Every append wakes the
// store's subscribers: append at once, appendTx when its ledgerTx commits.
type repository[S any, P aggregate[S]] struct {
	store      *eventstore.Store
	noun       string // names an instance in ErrNotFound, such as "erasure request"
	streamType string
	streamID   func(id string) string
	decode     func(eventType string, data []byte) (domain.Event, error)
}

// stream is the stream of instance id of tenant.
func (r *repository[S, P]) stream(id, tenant string) eventstore.Stream {
	return eventstore.Stream{ID: r.streamID(id), Type: r.streamType, TenantID: tenant}
}

// load replays the stream of instance id. An instance without events, or of a tenant
// other than tenant (unless AllTenants), is ErrNotFound.
func (r *repository[S, P]) load(ctx context.Context, tenant, id string) (*S, error) {
	recs, err := r.store.Load(ctx, r.streamID(id))
	if err != nil {
		return nil, err
	}
	return r.replay(tenant, id, recs)
}

// loadTx is load inside tx. After eventstore.LockHead in tx no other append can change
// the stream before tx ends.
func (r *repository[S, P]) loadTx(ctx context.Context, tx *ledgerTx, tenant, id string) (*S, error) {
	recs, err := r.store.LoadTx(ctx, tx.Tx, r.streamID(id))
	if err != nil {
		return nil, err
	}
	return r.replay(tenant, id, recs)
}

func (r *repository[S, P]) replay(tenant, id string, recs []eventstore.Record) (*S, error) {
	return r.replayEach(tenant, id, recs, nil)
}

// history replays the stream of instance id like load, calling after with each record
// and the state it left (the history of a request, event by event).
func (r *repository[S, P]) history(ctx context.Context, tenant, id string, after func(rec *eventstore.Record, s *S)) error {
	recs, err := r.store.Load(ctx, r.streamID(id))
	if err != nil {
		return err
	}
	_, err = r.replayEach(tenant, id, recs, after)
	return err
}

func (r *repository[S, P]) replayEach(tenant, id string, recs []eventstore.Record, after func(rec *eventstore.Record, s *S)) (*S, error) {
	if len(recs) == 0 || (tenant != AllTenants && recs[0].TenantID != tenant) {
		return nil, fmt.Errorf("%w: %s %s", ErrNotFound, r.noun, id)
	}
	s := new(S)
	for i := range recs {
		ev, err := r.decode(recs[i].EventType, recs[i].Data)
		if err != nil {
			return nil, err
		}
		P(s).Apply(ev, recs[i].RecordedAt)
		if after != nil {
			after(&recs[i], s)
		}
	}
	return s, nil
}

// append appends events to stream if it is at version expected (eventstore.NoStream for
// a new instance), wakes the subscribers, and applies the events to s (unless nil).
func (r *repository[S, P]) append(ctx context.Context, s *S, stream eventstore.Stream, expected int64, md domain.Metadata, events ...domain.Event) ([]eventstore.Record, error) {
	recs, err := r.store.Append(ctx, stream, expected, newEvents(md, events)...)
	if err != nil {
		return nil, err
	}
	applyAll(P(s), events, recs)
	return recs, nil
}

// appendTx is append inside tx; the subscribers are woken once tx commits.
func (r *repository[S, P]) appendTx(ctx context.Context, tx *ledgerTx, s *S, stream eventstore.Stream, expected int64, md domain.Metadata, events ...domain.Event) ([]eventstore.Record, error) {
	recs, err := tx.append(ctx, stream, expected, newEvents(md, events)...)
	if err != nil {
		return nil, err
	}
	applyAll(P(s), events, recs)
	return recs, nil
}

func newEvents(md domain.Metadata, events []domain.Event) []eventstore.NewEvent {
	out := make([]eventstore.NewEvent, len(events))
	for i, e := range events {
		out[i] = eventstore.FromDomain(e, md)
	}
	return out
}

// applyAll applies the appended events to s, each at its record's time; a nil s is left.
func applyAll[S any, P aggregate[S]](s P, events []domain.Event, recs []eventstore.Record) {
	if s == nil {
		return
	}
	for i, e := range events {
		s.Apply(e, recs[i].RecordedAt)
	}
}

// ledgerTx is a transaction that appends events. Its appends wake the store's
// subscribers only once it has committed, so that no use case has to remember
// eventstore.Store.Notify: inLedgerTx runs and commits it. For a transaction another
// package owns and commits (the archive's purge batches, the end of a reindex), set Tx in
// the owner's callback and call wake once the owner has returned.
type ledgerTx struct {
	*database.Tx
	store *eventstore.Store
	last  int64 // the last position appended and not yet announced
}

// inLedgerTx runs fn in a transaction and, once it has committed, wakes the subscribers
// to the events fn appended. A transaction that rolls back wakes no one.
func inLedgerTx(ctx context.Context, store *eventstore.Store, fn func(tx *ledgerTx) error) error {
	lt := &ledgerTx{store: store}
	err := store.DB().InTx(ctx, func(tx *database.Tx) error {
		lt.Tx = tx
		return fn(lt)
	})
	if err != nil {
		return err
	}
	lt.wake()
	return nil
}

// append is eventstore.Store.AppendTx in this transaction.
func (t *ledgerTx) append(ctx context.Context, stream eventstore.Stream, expected int64, events ...eventstore.NewEvent) ([]eventstore.Record, error) {
	recs, err := t.store.AppendTx(ctx, t.Tx, stream, expected, events...)
	if err != nil {
		return nil, err
	}
	t.last = max(t.last, recs[len(recs)-1].Position)
	return recs, nil
}

// wake wakes the subscribers to the events appended so far, if any. Call it only after
// the commit.
func (t *ledgerTx) wake() {
	if t.last > 0 {
		t.store.Notify(t.last)
		t.last = 0
	}
}
