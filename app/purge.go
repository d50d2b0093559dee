package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
)

// Purge events: one per tenant and purge batch, counts only.
const (
	EventPurgeCompleted = "archive.purge_completed"
	purgeStreamType     = "archive_purge"
	purgeActor          = "system:purge"
)

// purgeCompleted is the payload of EventPurgeCompleted: how many messages of the stream's
// tenant one purge batch removed, and the retention cutoff it applied. No message ids,
// addresses or content.
type purgeCompleted struct {
	Purged int    `json:"purged"`
	Cutoff string `json:"cutoff"`
}

// Purger removes the messages whose retention has passed (erased ones included, from the
// day of their erasure) and records each removal in the ledger.
type Purger struct {
	store *eventstore.Store
	arc   *archive.Archive
	clock func() time.Time
}

// NewPurger returns a Purger; it rejects nil dependencies and an invalid configuration.
func NewPurger(store *eventstore.Store, arc *archive.Archive, cfg PurgerConfig) (*Purger, error) {
	if store == nil || arc == nil {
		return nil, errors.New("app: purger needs a store and an archive")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("purger: %w", err)
	}
	cfg.setDefaults()
	return &Purger{store: store, arc: arc, clock: cfg.Clock}, nil
}

// RunOnce runs one purge pass (archive.Purge) with the current time as the cutoff.
//
// Recording: every purge batch appends one archive.purge_completed event per tenant with
// the number purged, inside the batch's own transaction, so the ledger records exactly the
// removals that happened, even when a pass is interrupted. A pass that purges nothing
// appends nothing: an hourly schedule would otherwise fill the ledger with empty events.
// The batch transaction holds the ledger-head lock, so no legal hold can be placed between
// its hold check and the deletion.
func (p *Purger) RunOnce(ctx context.Context) (archive.PurgeResult, error) {
	now := p.clock().UTC()
	exempt, err := purgeExempt(ctx, p.store.DB())
	if err != nil {
		return archive.PurgeResult{}, fmt.Errorf("purge: %w", err)
	}
	ltx := &ledgerTx{store: p.store}
	res, err := p.arc.Purge(ctx, now, archive.PurgeOptions{
		Lock:   eventstore.LockHead,
		Exempt: exempt,
		OnBatch: func(ctx context.Context, tx *database.Tx, purged map[string]int) error {
			ltx.Tx = tx
			return p.record(ctx, ltx, purged, now)
		},
	})
	// The archive commits each batch itself; the batches before an error are committed.
	ltx.wake()
	if err != nil {
		return res, fmt.Errorf("purge: %w", err)
	}
	return res, nil
}

// record appends the purge events of one batch in tx.
func (p *Purger) record(ctx context.Context, tx *ledgerTx, purged map[string]int, cutoff time.Time) error {
	tenants := make([]string, 0, len(purged))
	for t := range purged {
		tenants = append(tenants, t)
	}
	sort.Strings(tenants)
	for _, t := range tenants {
		ev := eventstore.NewEvent{Type: EventPurgeCompleted, SchemaVersion: 1,
			Payload:  purgeCompleted{Purged: purged[t], Cutoff: cutoff.Format(time.RFC3339)},
			Metadata: domain.Metadata{Actor: purgeActor}}
		stream := eventstore.Stream{ID: "purge-" + t, Type: purgeStreamType, TenantID: t}
		if _, err := tx.append(ctx, stream, eventstore.AnyVersion, ev); err != nil {
			return err
		}
	}
	return nil
}

// purgeExempt are the tenants of the customers with enable_purge 0: their mail outlives
// its retention (but what an erasure removed).
func purgeExempt(ctx context.Context, db *database.DB) ([]string, error) {
	return queryRows(ctx, db, "customers", func(rows *sql.Rows) (string, error) {
		var t string
		return t, rows.Scan(&t)
	}, `SELECT customer_id FROM customers WHERE enable_purge = 0`)
}
