package projections

import (
	"context"
	"fmt"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain/legalhold"
	"github.com/mailledger/mailledger/eventstore"
)

// LegalHolds projects legal_holds: one row per hold with its current status.
type LegalHolds struct{}

var _ eventstore.Projector = LegalHolds{}

// Name implements eventstore.Projector.
func (LegalHolds) Name() string { return "legal_holds" }

// Tables implements eventstore.Projector.
func (LegalHolds) Tables() []string { return []string{"legal_holds"} }

// Project implements eventstore.Projector.
func (LegalHolds) Project(ctx context.Context, tx *database.Tx, rec *eventstore.Record) error {
	if rec.StreamType != legalhold.StreamType {
		return nil
	}
	e, err := legalhold.Decode(rec.EventType, rec.Data)
	if err != nil {
		return err
	}
	at := database.TimeArg(tx.Dialect, rec.RecordedAt)
	switch ev := e.(type) {
	case *legalhold.Placed:
		_, err = tx.Exec(ctx, `INSERT INTO legal_holds (id, tenant_id, type, value, reason, matter, status, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ev.ID, ev.TenantID, ev.Type, holdKey(ev.Type, ev.Value), ev.Reason, ev.Matter, legalhold.StatusActive, ev.CreatedBy, at)
	case *legalhold.Released:
		_, err = tx.Exec(ctx, `UPDATE legal_holds SET status = ?, released_by = ?, released_at = ? WHERE id = ?`,
			legalhold.StatusReleased, ev.ReleasedBy, at, ev.ID)
	}
	if err != nil {
		return fmt.Errorf("legal_holds: %w", err)
	}
	return nil
}

// holdKey is the value a hold is matched by: the address rule's key of its address or
// domain (docs/address-rule.md), the form address_role holds. Holds placed since the rule
// carry their key already; older events carry the value as typed then ("Bücher.example"),
// and a rebuild must give them the same key as the migration that re-keyed them did. A
// value the rule refuses stays as it is.
func holdKey(typ, value string) string {
	norm := analyzer.Normalize
	if typ == legalhold.TypeDomain {
		norm = analyzer.NormalizeDomain
	} else if typ != legalhold.TypeAddress {
		return value
	}
	if key, err := norm(value); err == nil {
		return key
	}
	return value
}
