package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/fault"
	"github.com/mailledger/mailledger/domain/legalhold"
	"github.com/mailledger/mailledger/eventstore"
)

// ErrNotFound means the object does not exist in the caller's tenant (another tenant's
// object is not found, never forbidden).
var ErrNotFound = fault.New(fault.NotFound, "not found")

// AllTenants, as a tenant argument, lets an administrator see every tenant.
const AllTenants = ""

// HoldView is a legal hold as the API shows it (docs/api.md).
type HoldView struct {
	ID         string     `json:"id"`
	TenantID   string     `json:"-"`
	Type       string     `json:"type"`
	Value      string     `json:"value"`
	Reason     string     `json:"reason"`
	Matter     string     `json:"matter"`
	Status     string     `json:"status"`
	CreatedBy  string     `json:"created_by"`
	CreatedAt  time.Time  `json:"created_at"`
	ReleasedBy *string    `json:"released_by"`
	ReleasedAt *time.Time `json:"released_at"`
}

// LegalHolds places, releases and lists legal holds; every change is a ledger event.
type LegalHolds struct {
	store *eventstore.Store
	holds *repository[legalhold.Hold, *legalhold.Hold]
}

// NewLegalHolds returns the legal-hold use cases; it rejects a nil store.
func NewLegalHolds(store *eventstore.Store) (*LegalHolds, error) {
	if store == nil {
		return nil, errors.New("app: legal holds need a store")
	}
	holds := &repository[legalhold.Hold, *legalhold.Hold]{store: store, noun: "legal hold",
		streamType: legalhold.StreamType, streamID: legalhold.StreamID, decode: legalhold.Decode}
	return &LegalHolds{store: store, holds: holds}, nil
}

// PlaceHoldInput is the body of POST /api/v1/admin/legal-holds.
type PlaceHoldInput struct {
	Type   string `json:"type"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
	Matter string `json:"matter"`
}

// Place creates an active hold in tenant.
func (h *LegalHolds) Place(ctx context.Context, tenant string, in PlaceHoldInput, md domain.Metadata) (*HoldView, error) {
	value, err := holdKey(in.Type, in.Value)
	if err != nil {
		return nil, err
	}
	id := "LH-" + uuid.Must(uuid.NewV7()).String()
	ev, err := legalhold.PlaceHold(legalhold.Place{ID: id, TenantID: tenant, Type: in.Type, Value: value,
		Reason: in.Reason, Matter: in.Matter, Actor: md.Actor})
	if err != nil {
		return nil, err
	}
	if _, err := h.holds.append(ctx, nil, h.holds.stream(id, tenant), eventstore.NoStream, md, ev); err != nil {
		return nil, err
	}
	return h.Get(ctx, tenant, id)
}

// Release ends an active hold of tenant (AllTenants for an administrator).
func (h *LegalHolds) Release(ctx context.Context, tenant, id string, md domain.Metadata) (*HoldView, error) {
	hold, err := h.holds.load(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	ev, err := hold.Release(md.Actor)
	if err != nil {
		return nil, err
	}
	if _, err := h.holds.append(ctx, hold, h.holds.stream(id, hold.TenantID), hold.Version, md, ev); err != nil {
		return nil, err
	}
	return h.Get(ctx, tenant, id)
}

const holdColumns = `id, tenant_id, type, value, reason, matter, status, created_by, created_at, released_by, released_at`

// Get returns one hold of tenant.
func (h *LegalHolds) Get(ctx context.Context, tenant, id string) (*HoldView, error) {
	q := `SELECT ` + holdColumns + ` FROM legal_holds WHERE id = ?`
	args := []any{id}
	if tenant != AllTenants {
		q, args = q+` AND tenant_id = ?`, append(args, tenant)
	}
	holds, err := h.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	if len(holds) == 0 {
		return nil, fmt.Errorf("%w: legal hold %s", ErrNotFound, id)
	}
	return &holds[0], nil
}

// List returns the holds of tenant, newest first, optionally only those of status.
func (h *LegalHolds) List(ctx context.Context, tenant, status string) ([]HoldView, error) {
	if status != "" && status != legalhold.StatusActive && status != legalhold.StatusReleased {
		v := &domain.ValidationError{}
		v.Add("status", `must be "active" or "released"`)
		return nil, v
	}
	q := `SELECT ` + holdColumns + ` FROM legal_holds WHERE 1 = 1`
	var args []any
	if tenant != AllTenants {
		q, args = q+` AND tenant_id = ?`, append(args, tenant)
	}
	if status != "" {
		q, args = q+` AND status = ?`, append(args, status)
	}
	return h.query(ctx, q+` ORDER BY created_at DESC, id DESC`, args...)
}

func (h *LegalHolds) query(ctx context.Context, q string, args ...any) ([]HoldView, error) {
	return queryRows(ctx, h.store.DB(), "legal holds", scanHold, q, args...)
}

func scanHold(rows *sql.Rows) (HoldView, error) {
	var v HoldView
	var created, releasedAt any
	var releasedBy sql.NullString
	err := rows.Scan(&v.ID, &v.TenantID, &v.Type, &v.Value, &v.Reason, &v.Matter, &v.Status, &v.CreatedBy, &created, &releasedBy, &releasedAt)
	if err != nil {
		return v, fmt.Errorf("scan legal hold: %w", err)
	}
	if v.CreatedAt, err = database.TimeValue(created); err != nil {
		return v, err
	}
	if releasedBy.Valid {
		v.ReleasedBy = &releasedBy.String
	}
	if releasedAt != nil {
		t, err := database.TimeValue(releasedAt)
		if err != nil {
			return v, err
		}
		v.ReleasedAt = &t
	}
	return v, nil
}
