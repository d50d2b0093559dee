package projections_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

// erasureStory appends the events of two requests: one blocked, re-assessed, approved,
// executed and completed; one rejected.
func erasureStory(t *testing.T, store *eventstore.Store) {
	t.Helper()
	ctx := context.Background()
	user := func(name string) domain.Metadata { return domain.Metadata{Actor: name, ClientIP: "198.51.100.4"} }
	system := domain.Metadata{Actor: "system:assessor"}
	counts := erasure.Counts{EmailsAsSender: 3, EmailsAsRecipient: 5, AttachmentsCount: 2, AffectedEmails: 7}
	one, two := "GDPR-2026-00001", "GDPR-2026-00002"
	steps := []struct {
		id string
		e  domain.Event
		md domain.Metadata
	}{
		{one, &erasure.Created{RequestID: one, TenantID: "acme", EmailAddresses: []string{"a@x.test", "b@x.test"}, RequesterName: "Ann", CreatedBy: "auditor"}, user("auditor")},
		{two, &erasure.Created{RequestID: two, TenantID: "globex", EmailAddresses: []string{"c@y.test"}, CreatedBy: "auditor"}, user("auditor")},
		{one, &erasure.AssessmentStarted{RequestID: one, StartedBy: "system:assessor"}, system},
		{one, &erasure.AssessmentBlocked{RequestID: one, LegalHoldIDs: []string{"LH-1", "LH-2"}, BlockedReason: "held", Counts: counts}, system},
		{one, &erasure.AssessmentStarted{RequestID: one, StartedBy: "auditor"}, user("auditor")},
		{one, &erasure.AssessmentCompleted{RequestID: one, Counts: counts}, system},
		{one, &erasure.Approved{RequestID: one, ApprovedBy: "approver"}, user("approver")},
		{one, &erasure.ExecutionStarted{RequestID: one, StartedBy: "approver"}, user("approver")},
		{one, &erasure.ExecutionCompleted{RequestID: one, DeletedCount: 7}, domain.Metadata{}},
		{two, &erasure.AssessmentStarted{RequestID: two}, system},
		{two, &erasure.AssessmentCompleted{RequestID: two}, system},
		{two, &erasure.Rejected{RequestID: two, RejectedBy: "approver", Reason: "identity not verified"}, user("approver")},
	}
	for _, s := range steps {
		tenant := "acme"
		if s.id == two {
			tenant = "globex"
		}
		stream := eventstore.Stream{ID: erasure.StreamID(s.id), Type: erasure.StreamType, TenantID: tenant}
		_, err := store.Append(ctx, stream, eventstore.AnyVersion, eventstore.FromDomain(s.e, s.md))
		require.NoError(t, err)
	}
}

// tableRows reads every row of table ordered by its first column, as comparable values.
func tableRows(t *testing.T, db *database.DB, table string) [][]any {
	t.Helper()
	rows, err := db.Query(`SELECT * FROM ` + table + ` ORDER BY 1`)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		out = append(out, vals)
	}
	require.NoError(t, rows.Err())
	return out
}

func TestErasureRowsLiveAndRebuilt(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		db := dbtest.Open(t, d)
		store, err := eventstore.New(db, eventstore.Options{Projectors: projections.All(), Clock: tickingClock()})
		require.NoError(t, err)
		erasureStory(t, store)
		tables := projections.Erasure{}.Tables()
		live := map[string][][]any{}
		for _, table := range tables {
			live[table] = tableRows(t, db, table)
			require.NotEmpty(t, live[table], table)
		}
		_, err = projections.Rebuild(context.Background(), store, nil)
		require.NoError(t, err)
		for _, table := range tables {
			assert.Equal(t, live[table], tableRows(t, db, table), "%s after a rebuild", table)
		}
		checkRequestRows(t, db, store)
		checkAuditRows(t, db)
	})
}

type requestRow struct {
	Status, Addresses, HoldIDs        string
	Sender, Recipient, Attachments    int
	Blocked                           bool
	BlockedReason, ApprovedBy, Reject *string
	ApprovedAt, ExecutedAt            any
	Deleted, Redacted                 int
	Hash                              *string
	Completion                        *int64
}

func readRequest(t *testing.T, db *database.DB, id string) requestRow {
	t.Helper()
	var r requestRow
	err := db.QueryRow(db.Rebind(`SELECT status, email_addresses, legal_hold_ids, emails_as_sender, emails_as_recipient, attachments_count, blocked_by_legal_hold, blocked_reason, approved_by, rejection_reason, approved_at, executed_at, deleted_count, redacted_count, certificate_hash, completion_position FROM gdpr_requests WHERE request_id = ?`), id).
		Scan(&r.Status, &r.Addresses, &r.HoldIDs, &r.Sender, &r.Recipient, &r.Attachments, &r.Blocked, &r.BlockedReason, &r.ApprovedBy, &r.Reject, &r.ApprovedAt, &r.ExecutedAt, &r.Deleted, &r.Redacted, &r.Hash, &r.Completion)
	require.NoError(t, err)
	return r
}

func checkRequestRows(t *testing.T, db *database.DB, store *eventstore.Store) {
	one := readRequest(t, db, "GDPR-2026-00001")
	assert.Equal(t, erasure.StatusCompleted, one.Status)
	assert.JSONEq(t, `["a@x.test","b@x.test"]`, one.Addresses)
	assert.JSONEq(t, `[]`, one.HoldIDs, "re-assessment clears the holds")
	assert.False(t, one.Blocked)
	assert.Nil(t, one.BlockedReason)
	assert.Equal(t, []int{3, 5, 2, 7, 0}, []int{one.Sender, one.Recipient, one.Attachments, one.Deleted, one.Redacted})
	require.NotNil(t, one.ApprovedBy)
	assert.Equal(t, "approver", *one.ApprovedBy)
	assert.NotNil(t, one.ExecutedAt)
	require.NotNil(t, one.Completion)
	assert.Equal(t, int64(9), *one.Completion)

	require.NotNil(t, one.Hash)
	assert.Equal(t, eventsHash(t, store, "GDPR-2026-00001"), *one.Hash, "certificate hash of the events")

	two := readRequest(t, db, "GDPR-2026-00002")
	assert.Equal(t, erasure.StatusRejected, two.Status)
	require.NotNil(t, two.ApprovedBy, "approved_by is set on reject")
	assert.Equal(t, "approver", *two.ApprovedBy)
	assert.NotNil(t, two.ApprovedAt)
	require.NotNil(t, two.Reject)
	assert.Equal(t, "identity not verified", *two.Reject)
	assert.Nil(t, two.Hash)
	assert.Nil(t, two.Completion)

	var year string
	var seq int
	require.NoError(t, db.QueryRow(`SELECT year_prefix, last_sequence FROM gdpr_request_sequence`).Scan(&year, &seq))
	assert.Equal(t, "2026", year)
	assert.Equal(t, 2, seq)
}

func checkAuditRows(t *testing.T, db *database.DB) {
	rows, err := db.Query(db.Rebind(`SELECT action, performed_by, performed_at, details, ip_address FROM gdpr_request_audit WHERE request_id = ? ORDER BY id`), "GDPR-2026-00001")
	require.NoError(t, err)
	defer rows.Close()
	var actions, by []string
	var details []map[string]any
	var ips []*string
	var first time.Time
	for rows.Next() {
		var a, p, d string
		var at any
		var ip *string
		require.NoError(t, rows.Scan(&a, &p, &at, &d, &ip))
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(d), &m))
		actions, by, details, ips = append(actions, a), append(by, p), append(details, m), append(ips, ip)
		if first.IsZero() {
			first, err = database.TimeValue(at)
			require.NoError(t, err)
		}
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"created", "assessment_started", "assessment_blocked", "assessment_started",
		"assessment_completed", "approved", "execution_started", "execution_completed"}, actions)
	assert.Equal(t, []string{"auditor", "system:assessor", "system:assessor", "auditor", "system:assessor",
		"approver", "approver", projections.SystemActor}, by)
	assert.Equal(t, time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), first, "performed_at is recorded_at")
	require.NotNil(t, ips[0])
	assert.Equal(t, "198.51.100.4", *ips[0])
	assert.Nil(t, ips[1])
	assert.Equal(t, map[string]any{"created_by": "auditor", "email_addresses": []any{"a@x.test", "b@x.test"}, "requester_name": "Ann"}, details[0])
	assert.Equal(t, []any{"LH-1", "LH-2"}, details[2]["legal_hold_ids"])
	assert.Equal(t, map[string]any{"deleted_count": float64(7)}, details[7])
}
