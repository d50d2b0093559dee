// Package export is the eDiscovery export job aggregate and its Bates number reservations.
//
// Rules:
//  1. A configuration is valid per docs/api.md (its table and the Bates prefix rule);
//     every problem is reported at once. Missing fields take their defaults; workers above
//     EDISCOVERY_WORKERS are lowered to it.
//  2. A new job reserves one Bates number per email id, a consecutive range: from the
//     explicit start, or after the highest number ever issued for the prefix (first use: 1).
//     An explicit start whose range overlaps any range already issued for the prefix, in any
//     job of any tenant, is a conflict. Every number of the range fits in bates_digits.
//     Reserved numbers stay consumed, whatever becomes of the job.
//  3. A job is pending, then running (admitted), then completed or failed. Cancel is allowed
//     from pending or running. Delete is allowed in every state but running, once.
//  4. Progress is recorded in batches of items; an item ends success, failed or skipped,
//     and only produced items carry a Bates number, assigned in email_ids order.
//  5. A download is allowed only from completed, and is recorded.
package export

import (
	"math"
	"time"

	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/fault"
)

// Job states.
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Item states.
const (
	ItemSuccess = "success"
	ItemFailed  = "failed"
	ItemSkipped = "skipped"
)

// ErrBatesConflict means an explicit start overlaps numbers already issued (rule 2).
var ErrBatesConflict = fault.New(fault.Conflict, "bates range conflict")

// ErrNotReady means the export is not completed, so it cannot be downloaded (rule 5).
var ErrNotReady = fault.New(fault.Conflict, "export not ready")

// Range is a reserved run of Bates numbers, both ends included.
type Range struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Reserve picks the range for a new job of n emails (rule 2), given every range already
// issued for the prefix.
func Reserve(issued []Range, start int64, n int, digits int) (Range, error) {
	if start == 0 {
		start = 1
		for _, r := range issued {
			if r.End >= start {
				start = r.End + 1
			}
		}
	} else {
		end := start + int64(n) - 1
		for _, r := range issued {
			if start <= r.End && r.Start <= end {
				return Range{}, ErrBatesConflict
			}
		}
	}
	got := Range{Start: start, End: start + int64(n) - 1}
	if float64(got.End) >= math.Pow10(digits) {
		v := &domain.ValidationError{}
		v.Add("bates_digits", "the numbers of this export would not fit in bates_digits digits")
		return Range{}, v
	}
	return got, nil
}

// Job is the aggregate's state, rebuilt from its events.
type Job struct {
	JobID       string
	TenantID    string
	Config      Config
	Reserved    Range
	Status      string
	Total       int
	Processed   int
	Failed      int
	BatesEnd    int64 // last number assigned to a produced item; 0 before any
	CreatedBy   string
	CreatedAt   time.Time
	StartedAt   time.Time
	CompletedAt time.Time
	Error       string
	Deleted     bool
	Version     int64
}

func (j *Job) refuse(action, need string) error {
	return &domain.TransitionError{Subject: "export " + j.JobID, State: j.Status, Action: action, Need: need}
}

// Start admits a pending job (rule 3).
func (j *Job) Start() (*Started, error) {
	if j.Status != StatusPending || j.Deleted {
		return nil, j.refuse("start", StatusPending)
	}
	return &Started{JobID: j.JobID}, nil
}

// Cancel stops a pending or running job (rule 3).
func (j *Job) Cancel(actor string) (*Cancelled, error) {
	if (j.Status != StatusPending && j.Status != StatusRunning) || j.Deleted {
		return nil, j.refuse("cancel", "pending or running")
	}
	return &Cancelled{JobID: j.JobID, CancelledBy: actor}, nil
}

// Delete removes a job that is not running (rule 3).
func (j *Job) Delete(actor string) (*Deleted, error) {
	if j.Status == StatusRunning || j.Deleted {
		return nil, j.refuse("delete", "pending, completed, failed or cancelled")
	}
	return &Deleted{JobID: j.JobID, DeletedBy: actor}, nil
}

// Progress records a batch of processed items of a running job (rule 4).
func (j *Job) Progress(items []Item) (*ItemsProcessed, error) {
	if j.Status != StatusRunning {
		return nil, j.refuse("record progress", StatusRunning)
	}
	return &ItemsProcessed{JobID: j.JobID, Items: items}, nil
}

// Complete ends a running job.
func (j *Job) Complete(c Completed) (*Completed, error) {
	if j.Status != StatusRunning {
		return nil, j.refuse("complete", StatusRunning)
	}
	c.JobID = j.JobID
	return &c, nil
}

// Fail ends a pending or running job with an error.
func (j *Job) Fail(message string) (*FailedEvent, error) {
	if j.Status != StatusRunning && j.Status != StatusPending {
		return nil, j.refuse("fail", "pending or running")
	}
	return &FailedEvent{JobID: j.JobID, ErrorMessage: message}, nil
}

// Download records a download of a completed job (rule 5).
func (j *Job) Download(actor, ip, userAgent string) (*Downloaded, error) {
	if j.Status != StatusCompleted || j.Deleted {
		return nil, ErrNotReady
	}
	return &Downloaded{JobID: j.JobID, DownloadedBy: actor, IPAddress: ip, UserAgent: userAgent}, nil
}

// NextBates is the number the next produced item gets (rule 4).
func (j *Job) NextBates() int64 {
	if j.BatesEnd == 0 {
		return j.Reserved.Start
	}
	return j.BatesEnd + 1
}
