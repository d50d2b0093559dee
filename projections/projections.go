// Package projections builds from the ledger's events the tables that docs/api.md
// shows (erasure requests, legal holds, exports).
// Projectors run inside the append transaction (eventstore.Projector), so the API reads
// its own writes, and Rebuild replays the whole log through the same code.
package projections

import (
	"context"
	"fmt"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
)

// All returns every projector of mailledger, in the order they are applied.
func All() []eventstore.Projector {
	return []eventstore.Projector{Streams{}, LegalHolds{}, Erasure{}, Export{}}
}

// rebuildPage is how many events Rebuild replays per read.
const rebuildPage = 5000

// Rebuild empties the tables of the store's projectors and replays the whole log through
// them in one transaction that holds the ledger-head lock, so no append interleaves and a
// failure leaves the old rows in place. progress, when not nil, is told how far it got.
func Rebuild(ctx context.Context, store *eventstore.Store, progress func(done, total int64)) (int64, error) {
	head, err := store.Head(ctx)
	if err != nil {
		return 0, err
	}
	var done int64
	err = store.DB().InTx(ctx, func(tx *database.Tx) error {
		if err := eventstore.LockHead(ctx, tx); err != nil {
			return err
		}
		if err := truncate(ctx, tx, store.Projectors()); err != nil {
			return err
		}
		return replay(ctx, tx, store, head.Size, &done, progress)
	})
	return done, err
}

func truncate(ctx context.Context, tx *database.Tx, ps []eventstore.Projector) error {
	for _, p := range ps {
		for _, table := range p.Tables() {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table); err != nil {
				return fmt.Errorf("empty %s: %w", table, err)
			}
		}
	}
	return nil
}

func replay(ctx context.Context, tx *database.Tx, store *eventstore.Store, total int64, done *int64, progress func(done, total int64)) error {
	for {
		recs, err := store.ReadAllTx(ctx, tx, *done, rebuildPage)
		if err != nil {
			return err
		}
		for i := range recs {
			for _, p := range store.Projectors() {
				if err := p.Project(ctx, tx, &recs[i]); err != nil {
					return fmt.Errorf("projection %s at position %d: %w", p.Name(), recs[i].Position, err)
				}
			}
			*done = recs[i].Position
		}
		if progress != nil {
			progress(*done, total)
		}
		if len(recs) < rebuildPage {
			return nil
		}
	}
}
