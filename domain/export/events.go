package export

import (
	"fmt"
	"time"

	"github.com/mailledger/mailledger/domain"
)

// StreamType is the ledger stream type of export jobs.
const StreamType = "export_job"

// StreamID is the ledger stream of a job.
func StreamID(jobID string) string { return "export-" + jobID }

// Stored event names; never change them.
const (
	EventCreated    = "export.job_created"
	EventStarted    = "export.job_started"
	EventProgress   = "export.items_processed"
	EventCompleted  = "export.job_completed"
	EventFailed     = "export.job_failed"
	EventCancelled  = "export.job_cancelled"
	EventDeleted    = "export.job_deleted"
	EventDownloaded = "export.job_downloaded"
)

// Created opens a job with its configuration and reserved Bates range.
type Created struct {
	JobID     string `json:"job_id"`
	TenantID  string `json:"tenant_id"`
	Config    Config `json:"config"`
	Reserved  Range  `json:"reserved"`
	CreatedBy string `json:"created_by"`
}

// Started admits the job.
type Started struct {
	JobID string `json:"job_id"`
}

// Item is the outcome of one email.
type Item struct {
	EmailID      int64  `json:"email_id"`
	BatesNumber  string `json:"bates_number"`
	Number       int64  `json:"number"` // the numeric part; 0 when not produced
	Status       string `json:"status"`
	ErrorMessage string `json:"error_message"`
}

// ItemsProcessed records a batch of items.
type ItemsProcessed struct {
	JobID string `json:"job_id"`
	Items []Item `json:"items"`
}

// Completed ends a job; the hashes let a production be proven unchanged later.
type Completed struct {
	JobID         string            `json:"job_id"`
	BatesEnd      int64             `json:"bates_end"`
	OutputSize    int64             `json:"output_size"`
	LoadFiles     map[string]string `json:"load_files"`     // file name → SHA-256 hex
	ManifestHash  string            `json:"manifest_hash"`  // SHA-256 over every produced file's path and hash
	ProducedFiles int               `json:"produced_files"` // files in the production
}

// FailedEvent ends a job with an error.
type FailedEvent struct {
	JobID        string `json:"job_id"`
	ErrorMessage string `json:"error_message"`
}

// Cancelled stops a job.
type Cancelled struct {
	JobID       string `json:"job_id"`
	CancelledBy string `json:"cancelled_by"`
}

// Deleted records that a job's files were removed.
type Deleted struct {
	JobID     string `json:"job_id"`
	DeletedBy string `json:"deleted_by"`
}

// Downloaded records one download.
type Downloaded struct {
	JobID        string `json:"job_id"`
	DownloadedBy string `json:"downloaded_by"`
	IPAddress    string `json:"ip_address"`
	UserAgent    string `json:"user_agent"`
}

func (*Created) EventType() string        { return EventCreated }
func (*Started) EventType() string        { return EventStarted }
func (*ItemsProcessed) EventType() string { return EventProgress }
func (*Completed) EventType() string      { return EventCompleted }
func (*FailedEvent) EventType() string    { return EventFailed }
func (*Cancelled) EventType() string      { return EventCancelled }
func (*Deleted) EventType() string        { return EventDeleted }
func (*Downloaded) EventType() string     { return EventDownloaded }

func (*Created) SchemaVersion() int        { return 1 }
func (*Started) SchemaVersion() int        { return 1 }
func (*ItemsProcessed) SchemaVersion() int { return 1 }
func (*Completed) SchemaVersion() int      { return 1 }
func (*FailedEvent) SchemaVersion() int    { return 1 }
func (*Cancelled) SchemaVersion() int      { return 1 }
func (*Deleted) SchemaVersion() int        { return 1 }
func (*Downloaded) SchemaVersion() int     { return 1 }

var registry = domain.Registry{
	EventCreated:    func() domain.Event { return &Created{} },
	EventStarted:    func() domain.Event { return &Started{} },
	EventProgress:   func() domain.Event { return &ItemsProcessed{} },
	EventCompleted:  func() domain.Event { return &Completed{} },
	EventFailed:     func() domain.Event { return &FailedEvent{} },
	EventCancelled:  func() domain.Event { return &Cancelled{} },
	EventDeleted:    func() domain.Event { return &Deleted{} },
	EventDownloaded: func() domain.Event { return &Downloaded{} },
}

// Decode turns a stored event of this aggregate back into its struct.
func Decode(eventType string, data []byte) (domain.Event, error) {
	e, err := registry.Decode(eventType, data)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return e, nil
}

// Apply moves the state by one event recorded at at.
func (j *Job) Apply(e domain.Event, at time.Time) {
	switch ev := e.(type) {
	case *Created:
		*j = Job{JobID: ev.JobID, TenantID: ev.TenantID, Config: ev.Config, Reserved: ev.Reserved,
			Status: StatusPending, Total: len(ev.Config.EmailIDs), CreatedBy: ev.CreatedBy, CreatedAt: at}
	case *Started:
		j.Status, j.StartedAt = StatusRunning, at
	case *ItemsProcessed:
		for _, it := range ev.Items {
			j.Processed++
			if it.Status == ItemFailed {
				j.Failed++
			}
			if it.Number > j.BatesEnd {
				j.BatesEnd = it.Number
			}
		}
	case *Completed:
		j.Status, j.CompletedAt, j.BatesEnd = StatusCompleted, at, ev.BatesEnd
	case *FailedEvent:
		j.Status, j.CompletedAt, j.Error = StatusFailed, at, ev.ErrorMessage
	case *Cancelled:
		j.Status, j.CompletedAt = StatusCancelled, at
	case *Deleted:
		j.Deleted = true
	}
	j.Version++
}
