package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
)

// RequestView is an erasure request as the API shows it (docs/api.md): the columns of
// gdpr_requests, with unset values nil, plus certificate_available.
type RequestView struct {
	ID                   int64      `json:"id"`
	RequestID            string     `json:"request_id"`
	TenantID             string     `json:"-"`
	EmailAddresses       []string   `json:"email_addresses"`
	RequesterName        *string    `json:"requester_name"`
	Status               string     `json:"status"`
	EmailsAsSender       int        `json:"emails_as_sender"`
	EmailsAsRecipient    int        `json:"emails_as_recipient"`
	AttachmentsCount     int        `json:"attachments_count"`
	BlockedByLegalHold   bool       `json:"blocked_by_legal_hold"`
	LegalHoldIDs         []string   `json:"legal_hold_ids"`
	BlockedReason        *string    `json:"blocked_reason"`
	CreatedBy            string     `json:"created_by"`
	CreatedAt            time.Time  `json:"created_at"`
	ApprovedBy           *string    `json:"approved_by"`
	ApprovedAt           *time.Time `json:"approved_at"`
	RejectionReason      *string    `json:"rejection_reason"`
	ExecutedAt           *time.Time `json:"executed_at"`
	DeletedCount         int        `json:"deleted_count"`
	RedactedCount        int        `json:"redacted_count"`
	CertificateHash      *string    `json:"certificate_hash"`
	CertificateAvailable bool       `json:"certificate_available"`
	// DueAt is when the request is due (30 days after its creation, later when extended);
	// Overdue says that it is still open past it (at the Erasure's clock).
	DueAt   time.Time `json:"due_at"`
	Overdue bool      `json:"overdue"`
	// CompletionPosition is the ledger position of the completion event, 0 before.
	CompletionPosition int64 `json:"-"`
}

// RequestList is one page of requests (GET /requests).
type RequestList struct {
	Requests []RequestView `json:"requests"`
	Total    int           `json:"total"`
	Limit    int           `json:"limit"`
	Offset   int           `json:"offset"`
}

// ListRequestsInput is the query of GET /requests. A zero Limit means DefaultRequestLimit.
type ListRequestsInput struct {
	Status string
	// Sort is "created" (newest first, the default) or "due" (the earliest due date first).
	Sort string
	// Overdue keeps only the requests still open (not completed, not rejected) past their
	// due date, at the Erasure's clock.
	Overdue bool
	Limit   int
	Offset  int
}

// Limits of a request list page.
const (
	DefaultRequestLimit = 50
	MaxRequestLimit     = 500
)

const requestColumns = `id, request_id, tenant_id, email_addresses, requester_name, status, emails_as_sender, emails_as_recipient, attachments_count, blocked_by_legal_hold, legal_hold_ids, blocked_reason, created_by, created_at, approved_by, approved_at, rejection_reason, executed_at, deleted_count, redacted_count, certificate_hash, completion_position, due_at`

// Get returns one request of tenant (AllTenants for an administrator); ErrNotFound when
// it does not exist there.
func (e *Erasure) Get(ctx context.Context, tenant, requestID string) (*RequestView, error) {
	q, args := `SELECT `+requestColumns+` FROM gdpr_requests WHERE request_id = ?`, []any{requestID}
	if tenant != AllTenants {
		q, args = q+` AND tenant_id = ?`, append(args, tenant)
	}
	views, err := e.queryRequests(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	if len(views) == 0 {
		return nil, fmt.Errorf("%w: erasure request %s", ErrNotFound, requestID)
	}
	return &views[0], nil
}

// List returns one page of tenant's requests (AllTenants: every tenant's), newest first,
// optionally of one status. A bad status, limit (1..500) or offset (≥ 0) is a
// *domain.ValidationError.
func (e *Erasure) List(ctx context.Context, tenant string, in ListRequestsInput) (*RequestList, error) {
	if in.Limit == 0 {
		in.Limit = DefaultRequestLimit
	}
	if err := validateList(in); err != nil {
		return nil, err
	}
	where, args := ` WHERE 1 = 1`, []any{}
	if tenant != AllTenants {
		where, args = where+` AND tenant_id = ?`, append(args, tenant)
	}
	if in.Status != "" {
		where, args = where+` AND status = ?`, append(args, in.Status)
	}
	if in.Overdue {
		where = where + ` AND status NOT IN (?, ?) AND due_at < ?`
		args = append(args, erasure.StatusCompleted, erasure.StatusRejected, database.TimeArg(e.store.DB().Dialect, e.cfg.Clock()))
	}
	out := &RequestList{Limit: in.Limit, Offset: in.Offset}
	db := e.store.DB()
	if err := db.QueryRowContext(ctx, db.Rebind(`SELECT COUNT(*) FROM gdpr_requests`+where), args...).Scan(&out.Total); err != nil {
		return nil, fmt.Errorf("count erasure requests: %w", err)
	}
	order := ` ORDER BY created_at DESC, id DESC`
	if in.Sort == "due" {
		order = ` ORDER BY due_at, id`
	}
	q := `SELECT ` + requestColumns + ` FROM gdpr_requests` + where + order + ` LIMIT ? OFFSET ?`
	var err error
	out.Requests, err = e.queryRequests(ctx, q, append(args, in.Limit, in.Offset)...)
	return out, err
}

func validateList(in ListRequestsInput) error {
	var v domain.ValidationError
	if in.Status != "" && !slices.Contains(erasure.Statuses, in.Status) {
		v.Add("status", "must be one of the request states")
	}
	if in.Limit < 1 || in.Limit > MaxRequestLimit {
		v.Add("limit", "must be between 1 and 500")
	}
	if in.Offset < 0 {
		v.Add("offset", "must not be negative")
	}
	if in.Sort != "" && in.Sort != "created" && in.Sort != "due" {
		v.Add("sort", `must be "created" or "due"`)
	}
	return v.Err()
}

// queryRequests reads request rows; each view's Overdue is read at the Erasure's clock.
func (e *Erasure) queryRequests(ctx context.Context, q string, args ...any) ([]RequestView, error) {
	views, err := queryRows(ctx, e.store.DB(), "erasure requests", scanRequest, q, args...)
	now := e.cfg.Clock()
	for i := range views {
		v := &views[i]
		v.Overdue = v.Status != erasure.StatusCompleted && v.Status != erasure.StatusRejected && now.After(v.DueAt)
	}
	return views, err
}

// requestNulls receives the nullable and JSON columns of a request row.
type requestNulls struct {
	requester, reason, approvedBy, rejection, hash sql.NullString
	position                                       sql.NullInt64
	created, approvedAt, executedAt, due           any
	addrs, holds                                   string
}

func scanRequest(rows *sql.Rows) (RequestView, error) {
	var v RequestView
	var n requestNulls
	err := rows.Scan(&v.ID, &v.RequestID, &v.TenantID, &n.addrs, &n.requester, &v.Status, &v.EmailsAsSender,
		&v.EmailsAsRecipient, &v.AttachmentsCount, &v.BlockedByLegalHold, &n.holds, &n.reason, &v.CreatedBy,
		&n.created, &n.approvedBy, &n.approvedAt, &n.rejection, &n.executedAt, &v.DeletedCount, &v.RedactedCount,
		&n.hash, &n.position, &n.due)
	if err != nil {
		return v, fmt.Errorf("scan erasure request: %w", err)
	}
	if err := n.fill(&v); err != nil {
		return v, fmt.Errorf("erasure request %s: %w", v.RequestID, err)
	}
	return v, nil
}

func (n *requestNulls) fill(v *RequestView) error {
	if err := json.Unmarshal([]byte(n.addrs), &v.EmailAddresses); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(n.holds), &v.LegalHoldIDs); err != nil {
		return err
	}
	if v.LegalHoldIDs == nil {
		v.LegalHoldIDs = []string{}
	}
	v.RequesterName, v.BlockedReason, v.ApprovedBy = ptr(n.requester), ptr(n.reason), ptr(n.approvedBy)
	v.RejectionReason, v.CertificateHash = ptr(n.rejection), ptr(n.hash)
	v.CompletionPosition = n.position.Int64
	v.CertificateAvailable = v.Status == erasure.StatusCompleted && v.CertificateHash != nil
	var err error
	if v.CreatedAt, err = database.TimeValue(n.created); err != nil {
		return err
	}
	if v.ApprovedAt, err = timePtr(n.approvedAt); err != nil {
		return err
	}
	if v.DueAt, err = database.TimeValue(n.due); err != nil {
		return err
	}
	v.ExecutedAt, err = timePtr(n.executedAt)
	return err
}

func ptr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

func timePtr(v any) (*time.Time, error) {
	if v == nil {
		return nil, nil
	}
	t, err := database.TimeValue(v)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// AuditRecord is one row of gdpr_request_audit as the API shows it.
type AuditRecord struct {
	ID          int64           `json:"id"`
	RequestID   string          `json:"request_id"`
	Action      string          `json:"action"`
	PerformedBy string          `json:"performed_by"`
	PerformedAt time.Time       `json:"performed_at"`
	Details     json.RawMessage `json:"details"`
	IPAddress   *string         `json:"ip_address"`
}

// Audit returns the audit records of a request of tenant, oldest first; ErrNotFound when
// the request does not exist there.
func (e *Erasure) Audit(ctx context.Context, tenant, requestID string) ([]AuditRecord, error) {
	if _, err := e.Get(ctx, tenant, requestID); err != nil {
		return nil, err
	}
	db := e.store.DB()
	rows, err := db.QueryContext(ctx, db.Rebind(`SELECT id, request_id, action, performed_by, performed_at, details, ip_address FROM gdpr_request_audit WHERE request_id = ? ORDER BY id`), requestID)
	if err != nil {
		return nil, fmt.Errorf("read erasure audit: %w", err)
	}
	defer rows.Close()
	out := []AuditRecord{}
	for rows.Next() {
		var a AuditRecord
		var at any
		var details string
		var ip sql.NullString
		if err := rows.Scan(&a.ID, &a.RequestID, &a.Action, &a.PerformedBy, &at, &details, &ip); err != nil {
			return nil, fmt.Errorf("scan erasure audit: %w", err)
		}
		if a.PerformedAt, err = database.TimeValue(at); err != nil {
			return nil, err
		}
		a.Details, a.IPAddress = json.RawMessage(details), ptr(ip)
		out = append(out, a)
	}
	return out, rows.Err()
}
