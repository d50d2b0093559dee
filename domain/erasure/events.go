package erasure

import (
	"fmt"
	"time"

	"github.com/mailledger/mailledger/domain"
)

// StreamType is the ledger stream type of erasure requests.
const StreamType = "erasure_request"

// StreamID is the ledger stream of a request.
func StreamID(requestID string) string { return "erasure-" + requestID }

// Stored event names; never change them.
const (
	EventCreated             = "erasure.request_created"
	EventAssessmentStarted   = "erasure.assessment_started"
	EventAssessmentCompleted = "erasure.assessment_completed"
	EventAssessmentBlocked   = "erasure.assessment_blocked"
	EventApproved            = "erasure.request_approved"
	EventRejected            = "erasure.request_rejected"
	EventExecutionBlocked    = "erasure.execution_blocked"
	EventExecutionStarted    = "erasure.execution_started"
	EventExecutionCompleted  = "erasure.execution_completed"
)

// Created opens a request.
type Created struct {
	RequestID      string   `json:"request_id"`
	TenantID       string   `json:"tenant_id"`
	EmailAddresses []string `json:"email_addresses"`
	RequesterName  string   `json:"requester_name"`
	CreatedBy      string   `json:"created_by"`
}

// AssessmentStarted moves the request to assessing.
type AssessmentStarted struct {
	RequestID string `json:"request_id"`
	StartedBy string `json:"started_by"`
}

// AssessmentCompleted records counts and moves to pending_approval.
type AssessmentCompleted struct {
	RequestID string `json:"request_id"`
	Counts
}

// AssessmentBlocked records counts and the blocking holds; the request is blocked.
type AssessmentBlocked struct {
	RequestID     string   `json:"request_id"`
	LegalHoldIDs  []string `json:"legal_hold_ids"`
	BlockedReason string   `json:"blocked_reason"`
	Counts
}

// Approved moves the request to approved.
type Approved struct {
	RequestID  string `json:"request_id"`
	ApprovedBy string `json:"approved_by"`
}

// Rejected ends the request.
type Rejected struct {
	RequestID  string `json:"request_id"`
	RejectedBy string `json:"rejected_by"`
	Reason     string `json:"reason"`
}

// ExecutionBlocked records a hold found at execution; the request is blocked.
type ExecutionBlocked struct {
	RequestID     string   `json:"request_id"`
	LegalHoldIDs  []string `json:"legal_hold_ids"`
	BlockedReason string   `json:"blocked_reason"`
}

// ExecutionStarted moves the request to executing.
type ExecutionStarted struct {
	RequestID string `json:"request_id"`
	StartedBy string `json:"started_by"`
}

// ExecutionCompleted ends the request with the number of emails deleted.
type ExecutionCompleted struct {
	RequestID    string `json:"request_id"`
	DeletedCount int    `json:"deleted_count"`
}

func (*Created) EventType() string             { return EventCreated }
func (*AssessmentStarted) EventType() string   { return EventAssessmentStarted }
func (*AssessmentCompleted) EventType() string { return EventAssessmentCompleted }
func (*AssessmentBlocked) EventType() string   { return EventAssessmentBlocked }
func (*Approved) EventType() string            { return EventApproved }
func (*Rejected) EventType() string            { return EventRejected }
func (*ExecutionBlocked) EventType() string    { return EventExecutionBlocked }
func (*ExecutionStarted) EventType() string    { return EventExecutionStarted }
func (*ExecutionCompleted) EventType() string  { return EventExecutionCompleted }

func (*Created) SchemaVersion() int             { return 1 }
func (*AssessmentStarted) SchemaVersion() int   { return 1 }
func (*AssessmentCompleted) SchemaVersion() int { return 1 }
func (*AssessmentBlocked) SchemaVersion() int   { return 1 }
func (*Approved) SchemaVersion() int            { return 1 }
func (*Rejected) SchemaVersion() int            { return 1 }
func (*ExecutionBlocked) SchemaVersion() int    { return 1 }
func (*ExecutionStarted) SchemaVersion() int    { return 1 }
func (*ExecutionCompleted) SchemaVersion() int  { return 1 }

var registry = domain.Registry{
	EventCreated:             func() domain.Event { return &Created{} },
	EventAssessmentStarted:   func() domain.Event { return &AssessmentStarted{} },
	EventAssessmentCompleted: func() domain.Event { return &AssessmentCompleted{} },
	EventAssessmentBlocked:   func() domain.Event { return &AssessmentBlocked{} },
	EventApproved:            func() domain.Event { return &Approved{} },
	EventRejected:            func() domain.Event { return &Rejected{} },
	EventExecutionBlocked:    func() domain.Event { return &ExecutionBlocked{} },
	EventExecutionStarted:    func() domain.Event { return &ExecutionStarted{} },
	EventExecutionCompleted:  func() domain.Event { return &ExecutionCompleted{} },
	EventDeadlineExtended:    func() domain.Event { return &DeadlineExtended{} },
}

// Decode turns a stored event of this aggregate back into its struct.
func Decode(eventType string, data []byte) (domain.Event, error) {
	e, err := registry.Decode(eventType, data)
	if err != nil {
		return nil, fmt.Errorf("erasure: %w", err)
	}
	return e, nil
}

// Apply moves the state by one event recorded at at (rule-free: events are facts).
func (r *Request) Apply(e domain.Event, at time.Time) {
	switch ev := e.(type) {
	case *Created:
		*r = Request{RequestID: ev.RequestID, TenantID: ev.TenantID, Addresses: ev.EmailAddresses,
			RequesterName: ev.RequesterName, Status: StatusPending, CreatedBy: ev.CreatedBy, CreatedAt: at,
			DueAt: at.Add(DefaultDeadline)}
	case *AssessmentStarted:
		r.Status = StatusAssessing
	case *AssessmentCompleted:
		r.Status, r.Counts, r.BlockedByHold, r.LegalHoldIDs, r.BlockedReason = StatusPendingApproval, ev.Counts, false, nil, ""
	case *AssessmentBlocked:
		r.Status, r.Counts, r.BlockedByHold, r.LegalHoldIDs, r.BlockedReason = StatusBlocked, ev.Counts, true, ev.LegalHoldIDs, ev.BlockedReason
	case *Approved:
		r.Status, r.ApprovedBy, r.ApprovedAt = StatusApproved, ev.ApprovedBy, at
	case *Rejected:
		r.Status, r.ApprovedBy, r.ApprovedAt, r.RejectionReason = StatusRejected, ev.RejectedBy, at, ev.Reason
	case *ExecutionBlocked:
		r.Status, r.BlockedByHold, r.LegalHoldIDs, r.BlockedReason = StatusBlocked, true, ev.LegalHoldIDs, ev.BlockedReason
	case *ExecutionStarted:
		r.Status = StatusExecuting
	case *ExecutionCompleted:
		r.Status, r.DeletedCount, r.ExecutedAt = StatusCompleted, ev.DeletedCount, at
	case *DeadlineExtended:
		r.DueAt = ev.DueAt
	}
	r.Version++
}
