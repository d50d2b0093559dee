package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
)

// Retention-rule events: every change of a tenant's rules, who made it and what it was.
const (
	EventRetentionRuleAdded   = "retention.rule_added"
	EventRetentionRuleDeleted = "retention.rule_deleted"
)

// RetentionRuleInput is the body of POST /api/v1/admin/retention-rules.
type RetentionRuleInput struct {
	Kind  string `json:"kind"`  // RetentionSender, RetentionRecipient or RetentionDomain
	Value string `json:"value"` // an address, or a domain for RetentionDomain
	Days  int    `json:"days"`  // 1 to 36500
}

// RetentionRuleView is a retention rule as the API shows it.
type RetentionRuleView struct {
	ID        string    `json:"id"`
	TenantID  string    `json:"tenant_id"`
	Kind      string    `json:"kind"`
	Value     string    `json:"value"`
	Days      int       `json:"days"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
}

// retentionRuleEvent is the payload of both events.
type retentionRuleEvent struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Value string `json:"value"`
	Days  int    `json:"days"`
}

// RetentionRules manages the tenants' retention rules; each change is a ledger event in
// the transaction that makes it, and Changed (RetentionPolicy.Invalidate) is called once
// it has committed, so that the next message archived follows it.
type RetentionRules struct {
	store   *eventstore.Store
	changed func()
}

// NewRetentionRules returns the use case over store; changed may be nil.
func NewRetentionRules(store *eventstore.Store, changed func()) (*RetentionRules, error) {
	if store == nil {
		return nil, errors.New("app: retention rules need a store")
	}
	if changed == nil {
		changed = func() {}
	}
	return &RetentionRules{store: store, changed: changed}, nil
}

const retentionColumns = `id, tenant_id, kind, value, days, created_by, created_at`

// List returns the rules of tenant (AllTenants: every tenant's), by kind and value.
func (r *RetentionRules) List(ctx context.Context, tenant string) ([]RetentionRuleView, error) {
	q, args := `SELECT `+retentionColumns+` FROM retention_rules`, []any{}
	if tenant != AllTenants {
		q, args = q+` WHERE tenant_id = ?`, append(args, tenant)
	}
	return queryRows(ctx, r.store.DB(), "retention rules", scanRetentionRule, q+` ORDER BY tenant_id, kind, value`, args...)
}

// Get returns one rule of tenant (AllTenants: of any tenant); another tenant's is ErrNotFound.
func (r *RetentionRules) Get(ctx context.Context, tenant, id string) (*RetentionRuleView, error) {
	q, args := `SELECT `+retentionColumns+` FROM retention_rules WHERE id = ?`, []any{id}
	if tenant != AllTenants {
		q, args = q+` AND tenant_id = ?`, append(args, tenant)
	}
	rules, err := queryRows(ctx, r.store.DB(), "retention rules", scanRetentionRule, q, args...)
	if err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%w: retention rule %q", ErrNotFound, id)
	}
	return &rules[0], nil
}

// Add adds a rule to tenant. A second rule of the same kind and value is ErrExists.
func (r *RetentionRules) Add(ctx context.Context, tenant string, in RetentionRuleInput, md domain.Metadata) (*RetentionRuleView, error) {
	value, err := validRetentionRule(in)
	if err != nil {
		return nil, err
	}
	v := RetentionRuleView{ID: "RR-" + uuid.Must(uuid.NewV7()).String(), TenantID: tenant, Kind: in.Kind, Value: value,
		Days: in.Days, CreatedBy: md.Actor, CreatedAt: time.Now().UTC()}
	err = inLedgerTx(ctx, r.store, func(tx *ledgerTx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM retention_rules WHERE tenant_id = ? AND kind = ? AND value = ?`, tenant, v.Kind, v.Value).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: a %s rule for %s", ErrExists, v.Kind, v.Value)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO retention_rules (`+retentionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			v.ID, tenant, v.Kind, v.Value, v.Days, v.CreatedBy, database.TimeArg(tx.Dialect, v.CreatedAt)); err != nil {
			return fmt.Errorf("insert retention rule: %w", err)
		}
		return r.record(ctx, tx, tenant, EventRetentionRuleAdded, v, md)
	})
	if err != nil {
		return nil, err
	}
	r.changed()
	return &v, nil
}

// Delete removes a rule of tenant (AllTenants: of any tenant); mail archived under it
// keeps its retention.
func (r *RetentionRules) Delete(ctx context.Context, tenant, id string, md domain.Metadata) error {
	v, err := r.Get(ctx, tenant, id)
	if err != nil {
		return err
	}
	err = inLedgerTx(ctx, r.store, func(tx *ledgerTx) error {
		res, err := tx.Exec(ctx, `DELETE FROM retention_rules WHERE id = ? AND tenant_id = ?`, v.ID, v.TenantID)
		if err != nil {
			return fmt.Errorf("delete retention rule: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: retention rule %q", ErrNotFound, id) // deleted meanwhile
		}
		return r.record(ctx, tx, v.TenantID, EventRetentionRuleDeleted, *v, md)
	})
	if err == nil {
		r.changed()
	}
	return err
}

func (r *RetentionRules) record(ctx context.Context, tx *ledgerTx, tenant, typ string, v RetentionRuleView, md domain.Metadata) error {
	stream := eventstore.Stream{ID: "retention-rules-" + tenant, Type: "retention_rules", TenantID: tenant}
	_, err := tx.append(ctx, stream, eventstore.AnyVersion, eventstore.NewEvent{Type: typ, SchemaVersion: 1,
		Payload: retentionRuleEvent{ID: v.ID, Kind: v.Kind, Value: v.Value, Days: v.Days}, Metadata: md})
	return err
}

// validRetentionRule checks in and returns its value's match key (an address's by the
// address rule, a domain's after IDNA mapping).
func validRetentionRule(in RetentionRuleInput) (string, error) {
	v := &domain.ValidationError{}
	var key string
	var err error
	switch in.Kind {
	case RetentionSender, RetentionRecipient:
		if key, err = analyzer.Normalize(in.Value); err != nil {
			v.Add("value", "must be an email address")
		}
	case RetentionDomain:
		if key, err = analyzer.NormalizeDomain(in.Value); err != nil {
			v.Add("value", "must be a domain name")
		}
	default:
		v.Add("kind", `must be "sender", "recipient" or "domain"`)
	}
	if in.Days < 1 || in.Days > maxRetentionDays {
		v.Add("days", fmt.Sprintf("must be between 1 and %d", maxRetentionDays))
	}
	return key, v.Err()
}

func scanRetentionRule(rows *sql.Rows) (RetentionRuleView, error) {
	var v RetentionRuleView
	var created any
	if err := rows.Scan(&v.ID, &v.TenantID, &v.Kind, &v.Value, &v.Days, &v.CreatedBy, &created); err != nil {
		return v, fmt.Errorf("scan retention rule: %w", err)
	}
	var err error
	v.CreatedAt, err = database.TimeValue(created)
	return v, err
}
