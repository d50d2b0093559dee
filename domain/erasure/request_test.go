package erasure

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/domain"
)

var t0 = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// inState builds a request in status by replaying the events that lead there.
func inState(t *testing.T, status string) *Request {
	t.Helper()
	r := &Request{}
	created, err := NewRequest(Create{RequestID: "GDPR-2026-00001", TenantID: "default", Actor: "creator", Addresses: []string{"Subject@Example.test"}})
	require.NoError(t, err)
	r.Apply(created, t0)
	path := map[string][]domain.Event{
		StatusPending:         nil,
		StatusAssessing:       {&AssessmentStarted{}},
		StatusBlocked:         {&AssessmentStarted{}, &AssessmentBlocked{LegalHoldIDs: []string{"LH-1"}}},
		StatusPendingApproval: {&AssessmentStarted{}, &AssessmentCompleted{}},
		StatusApproved:        {&AssessmentStarted{}, &AssessmentCompleted{}, &Approved{ApprovedBy: "approver"}},
		StatusExecuting:       {&AssessmentStarted{}, &AssessmentCompleted{}, &Approved{}, &ExecutionStarted{}},
		StatusCompleted:       {&AssessmentStarted{}, &AssessmentCompleted{}, &Approved{}, &ExecutionStarted{}, &ExecutionCompleted{DeletedCount: 3}},
		StatusRejected:        {&AssessmentStarted{}, &AssessmentCompleted{}, &Rejected{Reason: "no"}},
	}[status]
	for _, e := range path {
		r.Apply(e, t0)
	}
	require.Equal(t, status, r.Status)
	return r
}

type action struct {
	name string
	run  func(r *Request) (domain.Event, error)
}

var actions = []action{
	{"assess", func(r *Request) (domain.Event, error) { return r.StartAssessment("auditor") }},
	{"finish", func(r *Request) (domain.Event, error) { return r.FinishAssessment(Counts{}, nil, "") }},
	{"approve", func(r *Request) (domain.Event, error) { return r.Approve("approver", true) }},
	{"reject", func(r *Request) (domain.Event, error) { return r.Reject("approver", "not verified") }},
	{"execute", func(r *Request) (domain.Event, error) { return r.Execute("approver", nil, "") }},
	{"complete", func(r *Request) (domain.Event, error) { return r.Complete(1) }},
}

// allowed is the whole transition table (rules 2, 3, 4, 6, 7): state → actions allowed.
var allowed = map[string][]string{
	StatusPending:         {"assess"},
	StatusAssessing:       {"assess", "finish"},
	StatusBlocked:         {"assess"},
	StatusPendingApproval: {"assess", "approve", "reject"},
	StatusApproved:        {"execute"},
	StatusExecuting:       {"complete"},
	StatusCompleted:       {},
	StatusRejected:        {},
}

func TestEveryStateAndAction(t *testing.T) {
	for _, status := range Statuses {
		for _, a := range actions {
			r := inState(t, status)
			ev, err := a.run(r)
			want := contains(allowed[status], a.name)
			if want {
				assert.NoError(t, err, "%s from %s", a.name, status)
				assert.NotNil(t, ev)
				continue
			}
			assert.ErrorIs(t, err, domain.ErrInvalidTransition, "%s from %s: got %v; want invalid transition", a.name, status, err)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestRule1Addresses(t *testing.T) {
	got, problems := NormalizeAddresses([]string{" A@X.test", "a@x.test", "b@y.test", `"John Doe"@example.com`})
	assert.Empty(t, problems)
	assert.Equal(t, []string{"a@x.test", "b@y.test", `"john doe"@example.com`}, got, "a quoted local part that needs its quotes is an address")
	for _, bad := range [][]string{nil, {"not-an-address"}, {"Name <a@x.test>"}, {""}} {
		_, err := NewRequest(Create{Addresses: bad})
		var v *domain.ValidationError
		require.True(t, errors.As(err, &v), "%q: got %v", bad, err)
		assert.Contains(t, v.Fields, "email_addresses")
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = strings.Repeat("a", i+1) + "@x.test"
	}
	_, problems = NormalizeAddresses(many)
	assert.Contains(t, problems, "email_addresses", "101 addresses")
	_, problems = NormalizeAddresses([]string{"a@x.test", "bad one", "b@x.test", "also bad"})
	assert.Equal(t, map[string]string{"email_addresses": "2 of the addresses are not email addresses (RFC 5322 addr-spec)",
		"email_addresses[1]": "not an email address: bad one", "email_addresses[3]": "not an email address: also bad"},
		problems, "every bad address is named")
	_, err := NewRequest(Create{Addresses: []string{"a@x.test"}, RequesterName: strings.Repeat("n", 256)})
	assert.ErrorIs(t, err, domain.ErrValidation)
}

func TestRule3AssessmentOutcome(t *testing.T) {
	r := inState(t, StatusAssessing)
	ev, err := r.FinishAssessment(Counts{EmailsAsSender: 2}, []string{"LH-9"}, "address hold")
	require.NoError(t, err)
	r.Apply(ev, t0)
	assert.Equal(t, StatusBlocked, r.Status)
	assert.True(t, r.BlockedByHold)
	assert.Equal(t, []string{"LH-9"}, r.LegalHoldIDs)

	ev, err = r.StartAssessment("auditor")
	require.NoError(t, err)
	r.Apply(ev, t0)
	ev, err = r.FinishAssessment(Counts{EmailsAsSender: 2}, nil, "")
	require.NoError(t, err)
	r.Apply(ev, t0)
	assert.Equal(t, StatusPendingApproval, r.Status, "a released hold unblocks on re-assessment")
	assert.False(t, r.BlockedByHold)
	assert.Empty(t, r.LegalHoldIDs)
	assert.Equal(t, 2, r.Counts.EmailsAsSender)
}

func TestRule4RejectNeedsReason(t *testing.T) {
	for _, reason := range []string{"", "   ", strings.Repeat("x", 2001)} {
		_, err := inState(t, StatusPendingApproval).Reject("approver", reason)
		assert.ErrorIs(t, err, domain.ErrValidation, "reason %.10q", reason)
	}
	ev, err := inState(t, StatusPendingApproval).Reject("approver", "  identity not verified ")
	require.NoError(t, err)
	assert.Equal(t, "identity not verified", ev.Reason)
}

func TestRule5DistinctApprover(t *testing.T) {
	_, err := inState(t, StatusPendingApproval).Approve("creator", true)
	assert.ErrorIs(t, err, ErrDistinctApprover)
	_, err = inState(t, StatusPendingApproval).Approve("creator", false)
	assert.NoError(t, err, "allowed when GDPR_DISTINCT_APPROVER is false")
}

func TestRule6HoldAtExecutionBlocks(t *testing.T) {
	r := inState(t, StatusApproved)
	ev, err := r.Execute("approver", []string{"LH-2"}, "domain hold placed after approval")
	require.NoError(t, err)
	_, isBlocked := ev.(*ExecutionBlocked)
	require.True(t, isBlocked, "got %T; want *ExecutionBlocked", ev)
	r.Apply(ev, t0)
	assert.Equal(t, StatusBlocked, r.Status)
	assert.Equal(t, []string{"LH-2"}, r.LegalHoldIDs)
}

func TestRule7Completion(t *testing.T) {
	r := inState(t, StatusExecuting)
	ev, err := r.Complete(42)
	require.NoError(t, err)
	r.Apply(ev, t0.Add(time.Hour))
	assert.Equal(t, StatusCompleted, r.Status)
	assert.Equal(t, 42, r.DeletedCount)
	assert.Equal(t, t0.Add(time.Hour), r.ExecutedAt)
}

func TestDecodeEveryEvent(t *testing.T) {
	for name := range registry {
		e, err := Decode(name, []byte(`{"request_id":"GDPR-2026-00001"}`))
		require.NoError(t, err, name)
		assert.Equal(t, name, e.EventType())
		assert.Equal(t, 1, e.SchemaVersion())
	}
	_, err := Decode("erasure.unknown", []byte(`{}`))
	assert.Error(t, err)
}
