package app

import (
	"context"
	"fmt"

	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
)

// Bounds of a page of GET /api/v1/ledger/events.
const (
	DefaultEventsLimit = 100
	MaxEventsLimit     = 1000
)

// EventsQuery selects ledger events: of one stream and of one type when set, from
// position From on (1 when 0), at most Limit (DefaultEventsLimit when 0).
type EventsQuery struct {
	StreamID, Type string
	From           int64
	Limit          int
}

// Events returns the ledger's events of tenant (AllTenants: every tenant's) that q
// selects, in position order and as stored, so that a reader can recompute each leaf hash
// (docs/ledger.md), and the position to read the next page from (0 when this page is the
// last).
func (l *Ledger) Events(ctx context.Context, tenant string, q EventsQuery) ([]eventstore.Record, int64, error) {
	v := &domain.ValidationError{}
	if q.From < 0 {
		v.Add("from", "must be a position, 1 or more")
	}
	if q.Limit < 0 || q.Limit > MaxEventsLimit {
		v.Add("limit", fmt.Sprintf("must be between 1 and %d", MaxEventsLimit))
	}
	if err := v.Err(); err != nil {
		return nil, 0, err
	}
	if q.Limit == 0 {
		q.Limit = DefaultEventsLimit
	}
	f := eventstore.EventFilter{StreamID: q.StreamID, Type: q.Type, From: max(q.From, 1), Limit: q.Limit + 1}
	if tenant != AllTenants {
		f.Tenant = tenant
	}
	recs, err := l.store.Events(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	if len(recs) > q.Limit {
		return recs[:q.Limit], recs[q.Limit].Position, nil
	}
	return recs, 0, nil
}
