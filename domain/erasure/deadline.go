package erasure

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailledger/mailledger/domain"
)

// EventDeadlineExtended is the stored name of DeadlineExtended; never change it.
const EventDeadlineExtended = "erasure.deadline_extended"

// Deadlines of a request: it is due DefaultDeadline after its creation (GDPR Art. 12(3):
// one month), and may be extended once or more up to MaxDeadline after it (two further
// months), each time with a reason.
const (
	DefaultDeadline = 30 * 24 * time.Hour
	MaxDeadline     = 90 * 24 * time.Hour
)

// DeadlineExtended moves a request's due date later, with the reason.
type DeadlineExtended struct {
	RequestID  string    `json:"request_id"`
	DueAt      time.Time `json:"due_at"`
	Reason     string    `json:"reason"`
	ExtendedBy string    `json:"extended_by"`
}

func (*DeadlineExtended) EventType() string  { return EventDeadlineExtended }
func (*DeadlineExtended) SchemaVersion() int { return 1 }

// ExtendDeadline returns the event that moves the request's due date to until, by actor,
// for reason. A completed or rejected request has no deadline left; until must be later
// than the current due date and at most MaxDeadline after the creation; the reason is
// required.
func (r *Request) ExtendDeadline(actor string, until time.Time, reason string) (*DeadlineExtended, error) {
	if r.Status == StatusCompleted || r.Status == StatusRejected {
		return nil, r.refuse("extend the deadline", "an open request")
	}
	reason = strings.TrimSpace(reason)
	var v domain.ValidationError
	switch {
	case reason == "":
		v.Add("reason", "is required")
	case utf8.RuneCountInString(reason) > 2000:
		v.Add("reason", "must be at most 2000 characters")
	}
	until = until.UTC().Truncate(time.Microsecond)
	switch {
	case !until.After(r.DueAt):
		v.Add("due_at", "must be later than the current due date, "+r.DueAt.Format(time.RFC3339))
	case until.After(r.CreatedAt.Add(MaxDeadline)):
		v.Add("due_at", "must be at most 90 days after the request's creation, "+r.CreatedAt.Add(MaxDeadline).Format(time.RFC3339))
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return &DeadlineExtended{RequestID: r.RequestID, DueAt: until, Reason: reason, ExtendedBy: actor}, nil
}

// Overdue says whether the request is still open past its due date at now.
func (r *Request) Overdue(now time.Time) bool {
	return r.Status != StatusCompleted && r.Status != StatusRejected && now.After(r.DueAt)
}
