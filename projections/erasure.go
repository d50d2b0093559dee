package projections

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
)

// AuditActions maps each erasure event type to the action name of its gdpr_request_audit
// row.
var AuditActions = map[string]string{
	erasure.EventCreated:             "created",
	erasure.EventAssessmentStarted:   "assessment_started",
	erasure.EventAssessmentCompleted: "assessment_completed",
	erasure.EventAssessmentBlocked:   "assessment_blocked",
	erasure.EventApproved:            "approved",
	erasure.EventRejected:            "rejected",
	erasure.EventExecutionBlocked:    "execution_blocked",
	erasure.EventExecutionStarted:    "execution_started",
	erasure.EventExecutionCompleted:  "execution_completed",
	erasure.EventDeadlineExtended:    "deadline_extended",
}

// SystemActor is performed_by for an event recorded without an actor.
const SystemActor = "system"

// Erasure projects the erasure workflow's tables: gdpr_requests (one row per request, its
// id the position of the request's first event), gdpr_request_audit (one row per event,
// its id the event's position) and gdpr_request_sequence (the highest sequence number used
// per year). Every value comes from the events, so a rebuild gives the same rows.
type Erasure struct{}

var _ eventstore.Projector = Erasure{}

// Name implements eventstore.Projector.
func (Erasure) Name() string { return "gdpr_requests" }

// Tables implements eventstore.Projector.
func (Erasure) Tables() []string {
	return []string{"gdpr_requests", "gdpr_request_audit", "gdpr_request_sequence"}
}

// Project implements eventstore.Projector.
func (Erasure) Project(ctx context.Context, tx *database.Tx, rec *eventstore.Record) error {
	if rec.StreamType != erasure.StreamType {
		return nil
	}
	e, err := erasure.Decode(rec.EventType, rec.Data)
	if err != nil {
		return err
	}
	if err := projectRequest(ctx, tx, rec, e); err != nil {
		return fmt.Errorf("gdpr_requests: %w", err)
	}
	if err := projectAudit(ctx, tx, rec); err != nil {
		return fmt.Errorf("gdpr_request_audit: %w", err)
	}
	return nil
}

func projectRequest(ctx context.Context, tx *database.Tx, rec *eventstore.Record, e domain.Event) error {
	at := database.TimeArg(tx.Dialect, rec.RecordedAt)
	switch ev := e.(type) {
	case *erasure.Created:
		return insertRequest(ctx, tx, rec, ev)
	case *erasure.AssessmentStarted:
		return setRequest(ctx, tx, ev.RequestID, `status = ?`, erasure.StatusAssessing)
	case *erasure.AssessmentCompleted:
		return setRequest(ctx, tx, ev.RequestID, `status = ?, emails_as_sender = ?, emails_as_recipient = ?, attachments_count = ?, blocked_by_legal_hold = ?, legal_hold_ids = ?, blocked_reason = NULL`,
			erasure.StatusPendingApproval, ev.EmailsAsSender, ev.EmailsAsRecipient, ev.AttachmentsCount, false, "[]")
	case *erasure.AssessmentBlocked:
		return setRequest(ctx, tx, ev.RequestID, `status = ?, emails_as_sender = ?, emails_as_recipient = ?, attachments_count = ?, blocked_by_legal_hold = ?, legal_hold_ids = ?, blocked_reason = ?`,
			erasure.StatusBlocked, ev.EmailsAsSender, ev.EmailsAsRecipient, ev.AttachmentsCount, true, jsonList(ev.LegalHoldIDs), ev.BlockedReason)
	case *erasure.Approved:
		return setRequest(ctx, tx, ev.RequestID, `status = ?, approved_by = ?, approved_at = ?`, erasure.StatusApproved, ev.ApprovedBy, at)
	case *erasure.Rejected:
		return setRequest(ctx, tx, ev.RequestID, `status = ?, approved_by = ?, approved_at = ?, rejection_reason = ?`, erasure.StatusRejected, ev.RejectedBy, at, ev.Reason)
	case *erasure.ExecutionBlocked:
		return setRequest(ctx, tx, ev.RequestID, `status = ?, blocked_by_legal_hold = ?, legal_hold_ids = ?, blocked_reason = ?`,
			erasure.StatusBlocked, true, jsonList(ev.LegalHoldIDs), ev.BlockedReason)
	case *erasure.ExecutionStarted:
		return setRequest(ctx, tx, ev.RequestID, `status = ?`, erasure.StatusExecuting)
	case *erasure.ExecutionCompleted:
		return completeRequest(ctx, tx, rec, ev)
	case *erasure.DeadlineExtended:
		return setRequest(ctx, tx, ev.RequestID, `due_at = ?`, database.TimeArg(tx.Dialect, ev.DueAt))
	}
	return nil
}

func insertRequest(ctx context.Context, tx *database.Tx, rec *eventstore.Record, ev *erasure.Created) error {
	_, err := tx.Exec(ctx, `INSERT INTO gdpr_requests (id, request_id, tenant_id, email_addresses, requester_name, status, legal_hold_ids, created_by, created_at, due_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		rec.Position, ev.RequestID, ev.TenantID, jsonList(ev.EmailAddresses), nullable(ev.RequesterName),
		erasure.StatusPending, "[]", ev.CreatedBy, database.TimeArg(tx.Dialect, rec.RecordedAt),
		database.TimeArg(tx.Dialect, rec.RecordedAt.Add(erasure.DefaultDeadline)))
	if err != nil {
		return err
	}
	return raiseSequence(ctx, tx, ev.RequestID)
}

func setRequest(ctx context.Context, tx *database.Tx, requestID, set string, args ...any) error {
	res, err := tx.Exec(ctx, `UPDATE gdpr_requests SET `+set+` WHERE request_id = ?`, append(args, requestID)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return requireRequestRow(ctx, tx, requestID)
	}
	return nil
}

// requireRequestRow fails unless the request has a row. MySQL counts changed rows, not
// matched ones, so an update that sets the values already there (a second
// assessment_started while assessing) affects 0 rows of an existing request.
func requireRequestRow(ctx context.Context, tx *database.Tx, requestID string) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM gdpr_requests WHERE request_id = ?`, requestID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("request %s has no row", requestID)
	}
	return err
}

// completeRequest records the completion and the certificate hash, which commits to the
// completion event's chain hash.
func completeRequest(ctx context.Context, tx *database.Tx, rec *eventstore.Record, ev *erasure.ExecutionCompleted) error {
	hash, err := certificateHash(ctx, tx, rec)
	if err != nil {
		return err
	}
	return setRequest(ctx, tx, ev.RequestID, `status = ?, executed_at = ?, deleted_count = ?, redacted_count = 0, certificate_hash = ?, completion_position = ?`,
		erasure.StatusCompleted, database.TimeArg(tx.Dialect, rec.RecordedAt), ev.DeletedCount, hash, rec.Position)
}

// certificateHash derives the certificate of the request that completion completes the
// one way there is, certificate.BodyFromEvents over the request's events as stored (the
// way the bundle and its offline verifier derive it), never from the gdpr_requests row:
// a column that a migration or a bug changed cannot change the hash. The events up to
// the completion are already in tx, both when appending and when rebuilding.
func certificateHash(ctx context.Context, tx *database.Tx, completion *eventstore.Record) (string, error) {
	recs, err := eventstore.StreamTx(ctx, tx, completion.StreamID, completion.StreamVersion)
	if err != nil {
		return "", err
	}
	if n := len(recs); n == 0 || recs[n-1].Position != completion.Position {
		return "", fmt.Errorf("certificate of %s: the completion at position %d is not in the stream", completion.StreamID, completion.Position)
	}
	body, err := certificate.BodyFromEvents(recs)
	if err != nil {
		return "", fmt.Errorf("certificate of %s: %w", completion.StreamID, err)
	}
	return body.Hash()
}

// raiseSequence makes gdpr_request_sequence hold at least the sequence number of
// requestID (GDPR-YYYY-NNNNN) for its year.
func raiseSequence(ctx context.Context, tx *database.Tx, requestID string) error {
	year, seq, err := ParseRequestID(requestID)
	if err != nil {
		return err
	}
	q := `INSERT INTO gdpr_request_sequence (year_prefix, last_sequence) VALUES (?, ?) ON CONFLICT (year_prefix) DO UPDATE SET last_sequence = CASE WHEN excluded.last_sequence > gdpr_request_sequence.last_sequence THEN excluded.last_sequence ELSE gdpr_request_sequence.last_sequence END`
	if tx.Dialect == database.MySQL {
		q = `INSERT INTO gdpr_request_sequence (year_prefix, last_sequence) VALUES (?, ?) ON DUPLICATE KEY UPDATE last_sequence = GREATEST(last_sequence, VALUES(last_sequence))`
	}
	_, err = tx.Exec(ctx, q, year, seq)
	return err
}

// ErrBadRequestID means a request id is not of the form GDPR-YYYY-NNNNN.
var ErrBadRequestID = errors.New("bad erasure request id")

// ParseRequestID splits GDPR-YYYY-NNNNN (five or more digits) into its year and sequence.
func ParseRequestID(id string) (year string, seq int, err error) {
	if len(id) < 15 || id[:5] != "GDPR-" || id[9] != '-' {
		return "", 0, fmt.Errorf("%w: %q", ErrBadRequestID, id)
	}
	year = id[5:9]
	if _, err := strconv.Atoi(year); err != nil {
		return "", 0, fmt.Errorf("%w: %q", ErrBadRequestID, id)
	}
	seq, err = strconv.Atoi(id[10:])
	if err != nil || seq < 1 {
		return "", 0, fmt.Errorf("%w: %q", ErrBadRequestID, id)
	}
	return year, seq, nil
}

// projectAudit writes the event's audit row: the action, who (the metadata's actor), when
// (recorded_at), from where (the metadata's client IP) and the payload without ids.
func projectAudit(ctx context.Context, tx *database.Tx, rec *eventstore.Record) error {
	var md domain.Metadata
	if len(rec.Metadata) > 0 {
		if err := json.Unmarshal(rec.Metadata, &md); err != nil {
			return fmt.Errorf("metadata at position %d: %w", rec.Position, err)
		}
	}
	var payload map[string]any
	if err := json.Unmarshal(rec.Data, &payload); err != nil {
		return fmt.Errorf("payload at position %d: %w", rec.Position, err)
	}
	requestID, _ := payload["request_id"].(string)
	delete(payload, "request_id")
	delete(payload, "tenant_id")
	details, err := eventstore.CanonicalJSON(payload)
	if err != nil {
		return err
	}
	actor := md.Actor
	if actor == "" {
		actor = SystemActor
	}
	action, ok := AuditActions[rec.EventType]
	if !ok {
		return fmt.Errorf("no audit action for %s", rec.EventType)
	}
	_, err = tx.Exec(ctx, `INSERT INTO gdpr_request_audit (id, request_id, action, performed_by, performed_at, details, ip_address, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		rec.Position, requestID, action, database.Clip(actor, 255), database.TimeArg(tx.Dialect, rec.RecordedAt), string(details), nullable(database.Clip(md.ClientIP, 45)), rec.Position)
	return err
}

// jsonList encodes a list of strings as a JSON array, [] when empty.
func jsonList(list []string) string {
	if len(list) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(list)
	return string(b)
}

// nullable maps an empty string to SQL NULL.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
