package export

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/domain"
)

var t0 = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// Rule 2: continuing after the highest number ever issued, and the first use.
func TestReserveContinues(t *testing.T) {
	got, err := Reserve(nil, 0, 5, 6)
	require.NoError(t, err)
	assert.Equal(t, Range{1, 5}, got, "first use starts at 1")

	issued := []Range{{1, 5}, {100, 120}, {6, 10}}
	got, err = Reserve(issued, 0, 3, 6)
	require.NoError(t, err)
	assert.Equal(t, Range{121, 123}, got, "after the highest number, not the last range listed")
}

// Rule 2: an explicit start is taken when it overlaps nothing, and refused otherwise.
func TestReserveExplicitStart(t *testing.T) {
	issued := []Range{{1, 10}, {100, 120}}
	for _, tc := range []struct {
		start    int64
		n        int
		conflict bool
	}{
		{11, 89, false},    // 11..99 fills the gap exactly
		{11, 90, true},     // 11..100 touches 100
		{50, 10, false},    // inside the gap
		{10, 1, true},      // the last number of a range
		{1, 1, true},       // the first number
		{120, 5, true},     // the end of the second range
		{121, 1000, false}, // after everything
		{5, 200, true},     // spans both ranges
	} {
		got, err := Reserve(issued, tc.start, tc.n, 6)
		if tc.conflict {
			assert.ErrorIs(t, err, ErrBatesConflict, "start %d n %d", tc.start, tc.n)
			continue
		}
		require.NoError(t, err, "start %d n %d", tc.start, tc.n)
		assert.Equal(t, Range{tc.start, tc.start + int64(tc.n) - 1}, got)
	}
}

// Rule 2: every number of the range fits in bates_digits.
func TestReserveDigits(t *testing.T) {
	got, err := Reserve(nil, 0, 999, 3)
	require.NoError(t, err)
	assert.Equal(t, Range{1, 999}, got)
	_, err = Reserve(nil, 0, 1000, 3)
	require.Error(t, err)
	var v *domain.ValidationError
	require.True(t, errors.As(err, &v), "got %v", err)
	assert.Contains(t, v.Fields, "bates_digits")
	_, err = Reserve([]Range{{1, 95}}, 0, 4, 2)
	assert.NoError(t, err, "96..99 fit in two digits")
	_, err = Reserve([]Range{{1, 95}}, 0, 5, 2)
	assert.ErrorIs(t, err, domain.ErrValidation)
	_, err = Reserve(nil, 9_999_999_990, 10, 10)
	assert.NoError(t, err, "the largest ten-digit numbers")
}

// inState builds a job in status by replaying the events that lead there.
func inState(t *testing.T, status string, deleted bool) *Job {
	t.Helper()
	j := &Job{}
	cfg := Config{BatesPrefix: "ACME", BatesDigits: 6, EmailIDs: []int64{1, 2, 3}, Workers: 2}
	j.Apply(&Created{JobID: "job-1", TenantID: "acme", Config: cfg, Reserved: Range{10, 12}, CreatedBy: "auditor"}, t0)
	path := map[string][]Event{
		StatusPending:   nil,
		StatusRunning:   {&Started{}},
		StatusCompleted: {&Started{}, &Completed{BatesEnd: 11}},
		StatusFailed:    {&Started{}, &FailedEvent{ErrorMessage: "disk full"}},
		StatusCancelled: {&Cancelled{}},
	}[status]
	for _, e := range path {
		j.Apply(e, t0.Add(time.Minute))
	}
	if deleted {
		j.Apply(&Deleted{}, t0.Add(time.Hour))
	}
	require.Equal(t, status, j.Status)
	return j
}

// Event is a domain event, short for the tables below.
type Event = domain.Event

type jobAction struct {
	name string
	run  func(j *Job) (Event, error)
}

var jobActions = []jobAction{
	{"start", func(j *Job) (Event, error) { return j.Start() }},
	{"cancel", func(j *Job) (Event, error) { return j.Cancel("auditor") }},
	{"delete", func(j *Job) (Event, error) { return j.Delete("auditor") }},
	{"progress", func(j *Job) (Event, error) { return j.Progress([]Item{{EmailID: 1, Status: ItemSuccess}}) }},
	{"complete", func(j *Job) (Event, error) { return j.Complete(Completed{BatesEnd: 10}) }},
	{"fail", func(j *Job) (Event, error) { return j.Fail("interrupted") }},
	{"download", func(j *Job) (Event, error) { return j.Download("auditor", "192.0.2.1", "curl") }},
}

// allowedActions is the whole transition table (rules 3, 4, 5): state → actions allowed.
var allowedActions = map[string][]string{
	StatusPending:   {"start", "cancel", "delete", "fail"},
	StatusRunning:   {"cancel", "progress", "complete", "fail"},
	StatusCompleted: {"delete", "download"},
	StatusFailed:    {"delete"},
	StatusCancelled: {"delete"},
}

var statuses = []string{StatusPending, StatusRunning, StatusCompleted, StatusFailed, StatusCancelled}

// Rules 3, 4 and 5: every state × action pair.
func TestEveryStateAndAction(t *testing.T) {
	for _, status := range statuses {
		for _, a := range jobActions {
			ev, err := a.run(inState(t, status, false))
			if slices.Contains(allowedActions[status], a.name) {
				assert.NoError(t, err, "%s from %s", a.name, status)
				assert.NotNil(t, ev, "%s from %s", a.name, status)
				continue
			}
			if a.name == "download" {
				assert.ErrorIs(t, err, ErrNotReady, "download from %s", status)
				continue
			}
			assert.ErrorIs(t, err, domain.ErrInvalidTransition, "%s from %s: got %v; want invalid transition", a.name, status, err)
		}
	}
}

// Rule 3: a job is deleted once; a deleted job is never started, cancelled or downloaded.
func TestDeletedJob(t *testing.T) {
	for _, status := range []string{StatusPending, StatusCompleted, StatusFailed, StatusCancelled} {
		j := inState(t, status, true)
		assert.True(t, j.Deleted)
		_, err := j.Delete("auditor")
		assert.ErrorIs(t, err, domain.ErrInvalidTransition, "second delete from %s", status)
		_, err = j.Start()
		assert.ErrorIs(t, err, domain.ErrInvalidTransition, "start of a deleted %s job", status)
		_, err = j.Cancel("auditor")
		assert.ErrorIs(t, err, domain.ErrInvalidTransition, "cancel of a deleted %s job", status)
		_, err = j.Download("auditor", "", "")
		assert.ErrorIs(t, err, ErrNotReady, "download of a deleted %s job", status)
	}
}

func TestTransitionErrorNamesTheJob(t *testing.T) {
	_, err := inState(t, StatusCompleted, false).Cancel("auditor")
	require.Error(t, err)
	assert.Equal(t, "export job-1 is completed; cancel needs pending or running", err.Error())
}

// Events carry their actors and inputs.
func TestEventsCarryTheirFacts(t *testing.T) {
	j := inState(t, StatusRunning, false)
	c, err := j.Cancel("alice")
	require.NoError(t, err)
	assert.Equal(t, &Cancelled{JobID: "job-1", CancelledBy: "alice"}, c)
	f, err := j.Fail("boom")
	require.NoError(t, err)
	assert.Equal(t, &FailedEvent{JobID: "job-1", ErrorMessage: "boom"}, f)
	done, err := j.Complete(Completed{JobID: "other", BatesEnd: 12, OutputSize: 99, ManifestHash: "ab"})
	require.NoError(t, err)
	assert.Equal(t, "job-1", done.JobID, "the job's own id wins")
	assert.Equal(t, int64(99), done.OutputSize)
	d, err := inState(t, StatusCompleted, false).Download("bob", "192.0.2.9", "Mozilla")
	require.NoError(t, err)
	assert.Equal(t, &Downloaded{JobID: "job-1", DownloadedBy: "bob", IPAddress: "192.0.2.9", UserAgent: "Mozilla"}, d)
	del, err := inState(t, StatusFailed, false).Delete("carol")
	require.NoError(t, err)
	assert.Equal(t, &Deleted{JobID: "job-1", DeletedBy: "carol"}, del)
}

// Apply moves the state as the events say.
func TestApply(t *testing.T) {
	j := inState(t, StatusPending, false)
	assert.Equal(t, "acme", j.TenantID)
	assert.Equal(t, 3, j.Total)
	assert.Equal(t, Range{10, 12}, j.Reserved)
	assert.Equal(t, t0, j.CreatedAt)
	assert.Equal(t, int64(1), j.Version)
	assert.Equal(t, int64(10), j.NextBates(), "the first number is the reserved start")

	j.Apply(&Started{JobID: "job-1"}, t0.Add(time.Second))
	assert.Equal(t, t0.Add(time.Second), j.StartedAt)
	j.Apply(&ItemsProcessed{Items: []Item{
		{EmailID: 1, Status: ItemSkipped},
		{EmailID: 2, Status: ItemSuccess, Number: 10, BatesNumber: "ACME_000010"},
	}}, t0)
	assert.Equal(t, 2, j.Processed)
	assert.Equal(t, int64(10), j.BatesEnd)
	assert.Equal(t, int64(11), j.NextBates(), "rule 4: numbers follow the produced items")
	j.Apply(&ItemsProcessed{Items: []Item{{EmailID: 3, Status: ItemFailed, ErrorMessage: "integrity"}}}, t0)
	assert.Equal(t, 3, j.Processed)
	assert.Equal(t, 1, j.Failed)
	assert.Equal(t, int64(11), j.NextBates(), "a failed item takes no number")
	j.Apply(&Completed{BatesEnd: 10}, t0.Add(time.Minute))
	assert.Equal(t, StatusCompleted, j.Status)
	assert.Equal(t, t0.Add(time.Minute), j.CompletedAt)
	assert.Equal(t, int64(5), j.Version)

	f := inState(t, StatusFailed, false)
	assert.Equal(t, "disk full", f.Error)
	assert.False(t, f.CompletedAt.IsZero())
	c := inState(t, StatusCancelled, false)
	assert.False(t, c.CompletedAt.IsZero())
}

// Every event survives its stored form: Decode(EventType, JSON) gives it back.
func TestDecodeRoundTrip(t *testing.T) {
	for _, e := range []Event{
		&Created{JobID: "j", TenantID: "t", Config: Config{BatesPrefix: "P", EmailIDs: []int64{1}}, Reserved: Range{1, 1}, CreatedBy: "a"},
		&Started{JobID: "j"},
		&ItemsProcessed{JobID: "j", Items: []Item{{EmailID: 1, BatesNumber: "P_000001", Number: 1, Status: ItemSuccess}}},
		&Completed{JobID: "j", BatesEnd: 1, OutputSize: 10, LoadFiles: map[string]string{"loadfile.csv": "aa"}, ManifestHash: "bb", ProducedFiles: 2},
		&FailedEvent{JobID: "j", ErrorMessage: "x"},
		&Cancelled{JobID: "j", CancelledBy: "a"},
		&Deleted{JobID: "j", DeletedBy: "a"},
		&Downloaded{JobID: "j", DownloadedBy: "a", IPAddress: "192.0.2.1", UserAgent: "u"},
	} {
		data, err := json.Marshal(e)
		require.NoError(t, err)
		got, err := Decode(e.EventType(), data)
		require.NoError(t, err, e.EventType())
		assert.Equal(t, e, got)
		assert.Equal(t, 1, e.SchemaVersion())
	}
	_, err := Decode("export.unknown", []byte(`{}`))
	assert.Error(t, err)
	_, err = Decode(EventStarted, []byte(`{`))
	assert.Error(t, err)
}

// Stored names never change: the ledger replays them.
func TestStoredNames(t *testing.T) {
	assert.Equal(t, "export-abc", StreamID("abc"))
	assert.Equal(t, "export_job", StreamType)
	assert.Equal(t, []string{"export.job_created", "export.job_started", "export.items_processed", "export.job_completed",
		"export.job_failed", "export.job_cancelled", "export.job_deleted", "export.job_downloaded"},
		[]string{EventCreated, EventStarted, EventProgress, EventCompleted, EventFailed, EventCancelled, EventDeleted, EventDownloaded})
}
