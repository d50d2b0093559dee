package projections_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/domain/legalhold"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

// otherEvent is an event of a stream type that no projector but ledger_streams reads.
type otherEvent struct {
	N int `json:"n"`
}

func (*otherEvent) EventType() string  { return "test.other" }
func (*otherEvent) SchemaVersion() int { return 1 }

// everyEventType lists the event types of every aggregate, and one that no aggregate
// owns; pathsStory must append each of them.
var everyEventType = []string{
	legalhold.EventPlaced, legalhold.EventReleased,
	erasure.EventCreated, erasure.EventAssessmentStarted, erasure.EventAssessmentCompleted, erasure.EventAssessmentBlocked,
	erasure.EventApproved, erasure.EventRejected, erasure.EventExecutionBlocked, erasure.EventExecutionStarted,
	erasure.EventExecutionCompleted, erasure.EventDeadlineExtended,
	export.EventCreated, export.EventStarted, export.EventProgress, export.EventCompleted, export.EventFailed,
	export.EventCancelled, export.EventDeleted, export.EventDownloaded,
	"test.other",
}

// pathBatch is one append: events of one stream, appended together.
type pathBatch struct {
	stream eventstore.Stream
	events []domain.Event
}

// pathsStory is every event type, each alone and in batches that open a stream or extend
// one, as the first, a middle or the last event of its batch.
func pathsStory() []pathBatch {
	hold := func(id string) eventstore.Stream {
		return eventstore.Stream{ID: legalhold.StreamID(id), Type: legalhold.StreamType, TenantID: "acme"}
	}
	req := func(id string) eventstore.Stream {
		return eventstore.Stream{ID: erasure.StreamID(id), Type: erasure.StreamType, TenantID: "acme"}
	}
	job := func(id string) eventstore.Stream {
		return eventstore.Stream{ID: export.StreamID(id), Type: export.StreamType, TenantID: "globex"}
	}
	const r1, r2 = "GDPR-2026-00011", "GDPR-2026-00012"
	counts := erasure.Counts{EmailsAsSender: 2, EmailsAsRecipient: 1, AttachmentsCount: 1, AffectedEmails: 3}
	cfg := export.Config{BatesPrefix: "PATH", BatesDigits: 6, LoadFileFormat: "csv", DateFormat: "iso8601", Workers: 1, EmailIDs: []int64{1, 2}}
	placed := func(id, value string) *legalhold.Placed {
		return &legalhold.Placed{ID: id, TenantID: "acme", Type: legalhold.TypeDomain, Value: value, Reason: "case", CreatedBy: "dpo"}
	}
	created := func(id string, start int64) *export.Created {
		return &export.Created{JobID: id, TenantID: "globex", Config: cfg, Reserved: export.Range{Start: start, End: start + 1}, CreatedBy: "auditor"}
	}
	item := func(n int64) []export.Item {
		return []export.Item{{EmailID: n, Status: export.ItemSuccess, Number: n, BatesNumber: fmt.Sprintf("PATH_%06d", n)}}
	}
	return []pathBatch{
		{hold("LH-P1"), []domain.Event{placed("LH-P1", "x.test")}},
		{hold("LH-P1"), []domain.Event{&legalhold.Released{ID: "LH-P1", ReleasedBy: "dpo"}}},
		{hold("LH-P2"), []domain.Event{placed("LH-P2", "y.test"), &legalhold.Released{ID: "LH-P2", ReleasedBy: "dpo"}}},
		{req(r1), []domain.Event{&erasure.Created{RequestID: r1, TenantID: "acme", EmailAddresses: []string{"a@x.test"}, CreatedBy: "auditor"},
			&erasure.AssessmentStarted{RequestID: r1, StartedBy: "system:assessor"}}},
		{req(r1), []domain.Event{&erasure.AssessmentBlocked{RequestID: r1, LegalHoldIDs: []string{"LH-P1"}, BlockedReason: "held", Counts: counts}}},
		{req(r1), []domain.Event{&erasure.AssessmentStarted{RequestID: r1}, &erasure.AssessmentCompleted{RequestID: r1, Counts: counts},
			&erasure.Approved{RequestID: r1, ApprovedBy: "approver"}}},
		{req(r1), []domain.Event{&erasure.ExecutionBlocked{RequestID: r1, LegalHoldIDs: []string{"LH-P2"}, BlockedReason: "held again"}}},
		{req(r1), []domain.Event{&erasure.Approved{RequestID: r1, ApprovedBy: "approver"}}},
		{req(r1), []domain.Event{&erasure.ExecutionStarted{RequestID: r1, StartedBy: "approver"}, &erasure.ExecutionCompleted{RequestID: r1, DeletedCount: 3}}},
		{req(r2), []domain.Event{&erasure.Created{RequestID: r2, TenantID: "acme", EmailAddresses: []string{"b@x.test"}, CreatedBy: "auditor"}}},
		{req(r2), []domain.Event{&erasure.AssessmentStarted{RequestID: r2},
			&erasure.DeadlineExtended{RequestID: r2, DueAt: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Reason: "complex", ExtendedBy: "dpo"}}},
		{req(r2), []domain.Event{&erasure.AssessmentCompleted{RequestID: r2}, &erasure.Rejected{RequestID: r2, RejectedBy: "approver", Reason: "no id"}}},
		{job("JOB-P1"), []domain.Event{created("JOB-P1", 1), &export.Started{JobID: "JOB-P1"}, &export.ItemsProcessed{JobID: "JOB-P1", Items: item(1)}}},
		{job("JOB-P1"), []domain.Event{&export.ItemsProcessed{JobID: "JOB-P1", Items: item(2)}}},
		{job("JOB-P1"), []domain.Event{&export.Completed{JobID: "JOB-P1", BatesEnd: 2, OutputSize: 10, ManifestHash: "ab", ProducedFiles: 2},
			&export.Downloaded{JobID: "JOB-P1", DownloadedBy: "dana", IPAddress: "192.0.2.1", UserAgent: "curl/8"}}},
		{job("JOB-P1"), []domain.Event{&export.Downloaded{JobID: "JOB-P1", DownloadedBy: "erik", IPAddress: "192.0.2.2", UserAgent: "curl/8"}}},
		{job("JOB-P1"), []domain.Event{&export.Deleted{JobID: "JOB-P1", DeletedBy: "auditor"}}},
		{job("JOB-P2"), []domain.Event{created("JOB-P2", 3)}},
		{job("JOB-P2"), []domain.Event{&export.Started{JobID: "JOB-P2"}, &export.FailedEvent{JobID: "JOB-P2", ErrorMessage: "disk full"}}},
		{job("JOB-P3"), []domain.Event{created("JOB-P3", 5), &export.Cancelled{JobID: "JOB-P3", CancelledBy: "auditor"}}},
		{job("JOB-P4"), []domain.Event{created("JOB-P4", 7)}},
		{job("JOB-P4"), []domain.Event{&export.Cancelled{JobID: "JOB-P4", CancelledBy: "auditor"}}},
		{eventstore.Stream{ID: "other-1", Type: "test_other", TenantID: "acme"}, []domain.Event{&otherEvent{1}, &otherEvent{2}, &otherEvent{3}}},
		{eventstore.Stream{ID: "other-1", Type: "test_other", TenantID: "acme"}, []domain.Event{&otherEvent{4}}},
	}
}

// projectionTables reads every table of every projector.
func projectionTables(t *testing.T, db *database.DB) map[string][][]any {
	t.Helper()
	out := map[string][][]any{}
	for _, p := range projections.All() {
		for _, table := range p.Tables() {
			out[table] = tableRows(t, db, table)
		}
	}
	return out
}

// TestProjectionPathsAgree proves that the two ways the projections write their rows agree
// for every event type. An append sends a StatementProjector's AppendStatements for all
// the events of the append at once (on PostgreSQL inside one statement of CTEs, on MySQL
// as one multi-statement) and calls Project of the other projectors record by record; a
// rebuild calls Project of every projector on each record in turn. After each append of
// pathsStory, the rows of every projection table equal the rows of a rebuild of the
// ledger so far.
func TestProjectionPathsAgree(t *testing.T) {
	story := pathsStory()
	var types []string
	for _, b := range story {
		for _, e := range b.events {
			types = append(types, e.EventType())
		}
	}
	for _, typ := range everyEventType {
		assert.Contains(t, types, typ, "pathsStory appends no %s", typ)
	}
	var statement []string
	for _, p := range projections.All() {
		if _, ok := p.(eventstore.StatementProjector); ok {
			statement = append(statement, p.Name())
		}
	}
	require.NotEmpty(t, statement, "no projector has a second path to compare")
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db := dbtest.Open(t, d)
		store, err := eventstore.New(db, eventstore.Options{Projectors: projections.All(), Clock: tickingClock()})
		require.NoError(t, err)
		for i, b := range story {
			evs := make([]eventstore.NewEvent, len(b.events))
			for j, e := range b.events {
				evs[j] = eventstore.FromDomain(e, domain.Metadata{Actor: "test"})
			}
			_, err := store.Append(ctx, b.stream, eventstore.AnyVersion, evs...)
			require.NoError(t, err, "append %d", i+1)
			live := projectionTables(t, db)
			_, err = projections.Rebuild(ctx, store, nil)
			require.NoError(t, err, "rebuild after append %d", i+1)
			rebuilt := projectionTables(t, db)
			for _, table := range slices.Sorted(maps.Keys(live)) {
				assert.Equal(t, live[table], rebuilt[table], "%s after append %d (%s …): appended rows; want the rebuilt ones",
					table, i+1, b.events[0].EventType())
			}
		}
	})
}
