// Package erasure is the GDPR Art. 17 erasure request aggregate.
//
// Rules:
//  1. A request names 1 to 100 data-subject addresses: trimmed, lower-cased, valid RFC 5322
//     addr-specs, de-duplicated. requester_name is optional, at most 255 characters.
//  2. A new request is pending. Assessment may start from pending, assessing (a stuck
//     assessment), blocked and pending_approval (re-assessment: a released hold unblocks).
//  3. An assessment ends in blocked when any affected email is under an active hold (the
//     blocking hold ids and a reason are recorded), else in pending_approval; both record
//     the counts. An assessment result is accepted only while assessing.
//  4. Approve and reject are allowed only from pending_approval. A rejection needs a
//     reason: not blank, at most 2000 characters.
//  5. While distinct approval is required (GDPR_DISTINCT_APPROVER, the default), the
//     creator of a request may not approve it.
//  6. Execute is allowed only from approved. Holds are checked again first: a hold placed
//     since approval sends the request to blocked instead of executing.
//  7. Execution ends in completed with the deleted count, only from executing;
//     redacted_count is always 0. Completed and rejected are final. (The certificate hash
//     commits to the completion event's chain hash, so it is derived from the stored
//     event, not carried in it.)
package erasure

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/fault"
)

// The states of a request.
const (
	StatusPending         = "pending"
	StatusAssessing       = "assessing"
	StatusBlocked         = "blocked"
	StatusPendingApproval = "pending_approval"
	StatusApproved        = "approved"
	StatusExecuting       = "executing"
	StatusCompleted       = "completed"
	StatusRejected        = "rejected"
)

// Statuses lists every state, for validating filters.
var Statuses = []string{StatusPending, StatusAssessing, StatusBlocked, StatusPendingApproval,
	StatusApproved, StatusExecuting, StatusCompleted, StatusRejected}

// MaxAddresses bounds the addresses of one request.
const MaxAddresses = 100

// ErrDistinctApprover means the creator tried to approve their own request (rule 5).
var ErrDistinctApprover = fault.New(fault.Forbidden, "distinct approver required")

// Counts are an assessment's results.
type Counts struct {
	EmailsAsSender    int `json:"emails_as_sender"`
	EmailsAsRecipient int `json:"emails_as_recipient"`
	AttachmentsCount  int `json:"attachments_count"`
	AffectedEmails    int `json:"affected_emails"`
}

// Request is the aggregate's state, rebuilt from its events.
type Request struct {
	RequestID       string
	TenantID        string
	Addresses       []string
	RequesterName   string
	Status          string
	Counts          Counts
	BlockedByHold   bool
	LegalHoldIDs    []string
	BlockedReason   string
	CreatedBy       string
	CreatedAt       time.Time
	ApprovedBy      string
	ApprovedAt      time.Time
	RejectionReason string
	ExecutedAt      time.Time
	DeletedCount    int
	// DueAt is when the request is due: DefaultDeadline after its creation, later when
	// extended.
	DueAt   time.Time
	Version int64
}

// Create is the command that opens a request.
type Create struct {
	RequestID, TenantID, RequesterName, Actor string
	Addresses                                 []string
}

// NewRequest validates cmd (rule 1) and returns the creating event.
func NewRequest(cmd Create) (*Created, error) {
	var v domain.ValidationError
	addrs, problems := NormalizeAddresses(cmd.Addresses)
	for field, problem := range problems {
		v.Add(field, problem)
	}
	name := strings.TrimSpace(cmd.RequesterName)
	if utf8.RuneCountInString(name) > 255 {
		v.Add("requester_name", "must be at most 255 characters")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return &Created{RequestID: cmd.RequestID, TenantID: cmd.TenantID, EmailAddresses: addrs,
		RequesterName: name, CreatedBy: cmd.Actor}, nil
}

// NormalizeAddresses trims, lower-cases, validates (domain.ValidAddress: one bare address,
// a quoted local part allowed) and de-duplicates addresses. The application gives it the
// keys of the address rule (analyzer.Normalize), which it keeps as they are. When they
// break rule 1 it returns the problems, field → reason: "email_addresses" says what is
// wrong overall, and each bad address (up to MaxAddresses of them) is named by its
// position, "email_addresses[2]".
func NormalizeAddresses(in []string) ([]string, map[string]string) {
	if len(in) == 0 {
		return nil, map[string]string{"email_addresses": "at least one address is required"}
	}
	seen := map[string]bool{}
	out := []string{}
	problems := map[string]string{}
	bad := 0
	for i, raw := range in {
		a := strings.ToLower(strings.TrimSpace(raw))
		if !domain.ValidAddress(a) {
			if bad++; bad <= MaxAddresses {
				problems[fmt.Sprintf("email_addresses[%d]", i)] = "not an email address: " + clip(strings.TrimSpace(raw), 320)
			}
			continue
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	switch {
	case bad > 0:
		problems["email_addresses"] = fmt.Sprintf("%d of the addresses are not email addresses (RFC 5322 addr-spec)", bad)
	case len(out) > MaxAddresses:
		problems["email_addresses"] = "at most 100 addresses"
	default:
		return out, nil
	}
	return nil, problems
}

// clip shortens s to at most n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

func (r *Request) refuse(action, need string) error {
	return &domain.TransitionError{Subject: "request " + r.RequestID, State: r.Status, Action: action, Need: need}
}

// StartAssessment returns the event that (re)starts the assessment (rule 2).
func (r *Request) StartAssessment(actor string) (*AssessmentStarted, error) {
	switch r.Status {
	case StatusPending, StatusAssessing, StatusBlocked, StatusPendingApproval:
		return &AssessmentStarted{RequestID: r.RequestID, StartedBy: actor}, nil
	}
	return nil, r.refuse("assess", "pending, assessing, blocked or pending_approval")
}

// FinishAssessment returns the result event of an assessment (rule 3): blocked when
// holdIDs is not empty, else completed.
func (r *Request) FinishAssessment(c Counts, holdIDs []string, reason string) (domain.Event, error) {
	if r.Status != StatusAssessing {
		return nil, r.refuse("finish assessment", StatusAssessing)
	}
	if len(holdIDs) > 0 {
		return &AssessmentBlocked{RequestID: r.RequestID, Counts: c, LegalHoldIDs: holdIDs, BlockedReason: reason}, nil
	}
	return &AssessmentCompleted{RequestID: r.RequestID, Counts: c}, nil
}

// Approve returns the approval event (rules 4 and 5).
func (r *Request) Approve(actor string, distinctApprover bool) (*Approved, error) {
	if r.Status != StatusPendingApproval {
		return nil, r.refuse("approve", StatusPendingApproval)
	}
	if distinctApprover && actor == r.CreatedBy {
		return nil, ErrDistinctApprover
	}
	return &Approved{RequestID: r.RequestID, ApprovedBy: actor}, nil
}

// Reject returns the rejection event (rule 4).
func (r *Request) Reject(actor, reason string) (*Rejected, error) {
	if r.Status != StatusPendingApproval {
		return nil, r.refuse("reject", StatusPendingApproval)
	}
	reason = strings.TrimSpace(reason)
	var v domain.ValidationError
	if reason == "" {
		v.Add("reason", "is required")
	} else if utf8.RuneCountInString(reason) > 2000 {
		v.Add("reason", "must be at most 2000 characters")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return &Rejected{RequestID: r.RequestID, RejectedBy: actor, Reason: reason}, nil
}

// Execute returns the event that starts deletion, or, when holdIDs shows a hold placed
// since approval, the event that blocks the request (rule 6).
func (r *Request) Execute(actor string, holdIDs []string, reason string) (domain.Event, error) {
	if r.Status != StatusApproved {
		return nil, r.refuse("execute", StatusApproved)
	}
	if len(holdIDs) > 0 {
		return &ExecutionBlocked{RequestID: r.RequestID, LegalHoldIDs: holdIDs, BlockedReason: reason}, nil
	}
	return &ExecutionStarted{RequestID: r.RequestID, StartedBy: actor}, nil
}

// Complete returns the completion event (rule 7).
func (r *Request) Complete(deleted int) (*ExecutionCompleted, error) {
	if r.Status != StatusExecuting {
		return nil, r.refuse("complete", StatusExecuting)
	}
	return &ExecutionCompleted{RequestID: r.RequestID, DeletedCount: deleted}, nil
}
