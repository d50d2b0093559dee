package projections_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

const (
	jobA = "0190a1b2-0000-7000-8000-00000000000a" // acme: runs, completes, is downloaded and deleted
	jobB = "0190a1b2-0000-7000-8000-00000000000b" // globex: runs and fails
	jobC = "0190a1b2-0000-7000-8000-00000000000c" // acme: cancelled while pending
	jobD = "0190a1b2-0000-7000-8000-00000000000d" // globex: still running
)

// exportStory appends the first n events (all when n is 0) of four jobs on two prefixes
// in two tenants.
func exportStory(t *testing.T, store *eventstore.Store, n int) {
	t.Helper()
	user := domain.Metadata{Actor: "auditor", ClientIP: "198.51.100.4", UserAgent: "Mozilla/5.0"}
	system := domain.Metadata{Actor: "system:export"}
	cfg := func(prefix string, n int) export.Config {
		c := export.Config{BatesPrefix: prefix, BatesDigits: 6, IncludeNatives: true, LoadFileFormat: "csv", DateFormat: "iso8601", Workers: 2}
		for i := range n {
			c.EmailIDs = append(c.EmailIDs, int64(i+1))
		}
		return c
	}
	items := []export.Item{
		{EmailID: 1, Status: export.ItemSuccess, Number: 1, BatesNumber: "CASE_000001"},
		{EmailID: 2, Status: export.ItemSkipped, ErrorMessage: "not found"},
		{EmailID: 3, Status: export.ItemFailed, ErrorMessage: "integrity error"},
	}
	steps := []struct {
		job, tenant string
		e           domain.Event
		md          domain.Metadata
	}{
		{jobA, "acme", &export.Created{JobID: jobA, TenantID: "acme", Config: cfg("CASE", 4), Reserved: export.Range{Start: 1, End: 4}, CreatedBy: "auditor"}, user},
		{jobB, "globex", &export.Created{JobID: jobB, TenantID: "globex", Config: cfg("CASE", 2), Reserved: export.Range{Start: 5, End: 6}, CreatedBy: "auditor"}, user},
		{jobC, "acme", &export.Created{JobID: jobC, TenantID: "acme", Config: cfg("OTHER", 3), Reserved: export.Range{Start: 100, End: 102}, CreatedBy: "auditor"}, user},
		{jobA, "acme", &export.Started{JobID: jobA}, system},
		{jobB, "globex", &export.Started{JobID: jobB}, system},
		{jobA, "acme", &export.ItemsProcessed{JobID: jobA, Items: items}, system},
		{jobA, "acme", &export.ItemsProcessed{JobID: jobA, Items: []export.Item{{EmailID: 4, Status: export.ItemSuccess, Number: 2, BatesNumber: "CASE_000002"}}}, system},
		{jobA, "acme", &export.Completed{JobID: jobA, BatesEnd: 2, OutputSize: 4096, ManifestHash: "ab12", LoadFiles: map[string]string{"loadfile.csv": "cd34"}, ProducedFiles: 3}, system},
		{jobC, "acme", &export.Cancelled{JobID: jobC, CancelledBy: "auditor"}, user},
		{jobB, "globex", &export.ItemsProcessed{JobID: jobB, Items: []export.Item{{EmailID: 2, Status: export.ItemSuccess, Number: 5, BatesNumber: "CASE_000005"}}}, system},
		{jobB, "globex", &export.FailedEvent{JobID: jobB, ErrorMessage: "disk full"}, system},
		{jobA, "acme", &export.Downloaded{JobID: jobA, DownloadedBy: "dana", IPAddress: "2001:db8::1", UserAgent: "curl/8"}, user},
		{jobA, "acme", &export.Downloaded{JobID: jobA, DownloadedBy: "erik", IPAddress: "192.0.2.9", UserAgent: "Mozilla/5.0"}, user},
		{jobD, "globex", &export.Created{JobID: jobD, TenantID: "globex", Config: cfg("OTHER", 1), Reserved: export.Range{Start: 103, End: 103}, CreatedBy: "auditor"}, user},
		{jobD, "globex", &export.Started{JobID: jobD}, system},
		{jobA, "acme", &export.Deleted{JobID: jobA, DeletedBy: "auditor"}, user},
	}
	if n == 0 {
		n = len(steps)
	}
	for _, s := range steps[:n] {
		stream := eventstore.Stream{ID: export.StreamID(s.job), Type: export.StreamType, TenantID: s.tenant}
		_, err := store.Append(context.Background(), stream, eventstore.AnyVersion, eventstore.FromDomain(s.e, s.md))
		require.NoError(t, err)
	}
}

func TestExportRowsLiveAndRebuilt(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		db := dbtest.Open(t, d)
		store, err := eventstore.New(db, eventstore.Options{Projectors: projections.All(), Clock: tickingClock()})
		require.NoError(t, err)
		exportStory(t, store, 0)
		tables := projections.Export{}.Tables()
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
		checkExportRows(t, db)
	})
}

type exportRow struct {
	ID                       int64
	Job, Tenant, Status      string
	Start                    int64
	End                      *int64
	Total, Processed, Failed int
	Path                     string
	Size                     *int64
	Error, Manifest          *string
	Started, Completed       any
}

func readExports(t *testing.T, db *database.DB) map[string]exportRow {
	rows, err := db.Query(`SELECT id, job_id, tenant_id, status, bates_start, bates_end, total_emails, processed, failed, output_path, output_size, error_message, manifest_hash, started_at, completed_at FROM ediscovery_exports`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]exportRow{}
	for rows.Next() {
		var r exportRow
		require.NoError(t, rows.Scan(&r.ID, &r.Job, &r.Tenant, &r.Status, &r.Start, &r.End, &r.Total, &r.Processed, &r.Failed, &r.Path, &r.Size, &r.Error, &r.Manifest, &r.Started, &r.Completed))
		out[r.Job] = r
	}
	require.NoError(t, rows.Err())
	return out
}

func checkExportRows(t *testing.T, db *database.DB) {
	exports := readExports(t, db)
	assert.NotContains(t, exports, jobA, "a deleted job has no row")
	b, c, dd := exports[jobB], exports[jobC], exports[jobD]
	assert.Equal(t, []string{export.StatusFailed, export.StatusCancelled, export.StatusRunning}, []string{b.Status, c.Status, dd.Status})
	assert.Equal(t, int64(2), b.ID, "the id is the position of the job's first event")
	assert.Equal(t, int64(5), b.Start)
	require.NotNil(t, b.Error)
	assert.Equal(t, "disk full", *b.Error)
	assert.NotNil(t, b.Completed)
	assert.Nil(t, c.Started, "cancelled while pending")
	assert.Nil(t, dd.End)
	assert.Equal(t, "globex/ediscovery/"+jobD, dd.Path)

	assert.Equal(t, [][]any{{int64(15), "globex", jobD}}, ints(tableRowsCols(t, db, `SELECT id, tenant_id, job_id FROM ediscovery_active_exports`)),
		"only the running job holds a slot")
	assert.Equal(t, [][]any{{"CASE", int64(6)}, {"OTHER", int64(103)}}, ints(tableRowsCols(t, db, `SELECT prefix, last_number FROM ediscovery_bates_sequences ORDER BY prefix`)))
	assert.Equal(t, [][]any{{"CASE", int64(1), int64(4), jobA}, {"CASE", int64(5), int64(6), jobB}, {"OTHER", int64(100), int64(102), jobC}, {"OTHER", int64(103), int64(103), jobD}},
		ints(tableRowsCols(t, db, `SELECT prefix, range_start, range_end, job_id FROM ediscovery_bates_ranges ORDER BY prefix, range_start`)), "ranges stay when jobs are deleted")
	assert.Equal(t, [][]any{{int64(10000), jobB, int64(2), "CASE_000005"}}, ints(tableRowsCols(t, db, `SELECT id, job_id, email_id, bates_number FROM ediscovery_export_items`)),
		"a deleted job's items are gone")
	assert.Equal(t, []int{2, 1, 0}, []int{b.Total, b.Processed, b.Failed})
	logs := tableRowsCols(t, db, `SELECT id, job_id, downloaded_by, ip_address, user_agent FROM ediscovery_download_log ORDER BY id`)
	assert.Equal(t, [][]any{{int64(12), jobA, "dana", "2001:db8::1", "curl/8"}, {int64(13), jobA, "erik", "192.0.2.9", "Mozilla/5.0"}}, ints(logs),
		"download logs stay when their job is deleted")
}

// TestExportItemsRows checks the item rows and counters of a job before its deletion.
func TestExportItemsRows(t *testing.T) {
	db := dbtest.Open(t, database.SQLite)
	store, err := eventstore.New(db, eventstore.Options{Projectors: projections.All(), Clock: tickingClock()})
	require.NoError(t, err)
	exportStory(t, store, 8) // up to the completion of job A
	a := readExports(t, db)[jobA]
	assert.Equal(t, export.StatusCompleted, a.Status)
	assert.Equal(t, []int{4, 4, 1}, []int{a.Total, a.Processed, a.Failed})
	require.NotNil(t, a.End)
	assert.Equal(t, int64(2), *a.End)
	require.NotNil(t, a.Size)
	assert.Equal(t, int64(4096), *a.Size)
	require.NotNil(t, a.Manifest)
	assert.Equal(t, "ab12", *a.Manifest)
	items := tableRowsCols(t, db, `SELECT id, email_id, bates_number, status, error_message FROM ediscovery_export_items ORDER BY id`)
	assert.Equal(t, [][]any{
		{int64(6000), int64(1), "CASE_000001", "success", nil},
		{int64(6001), int64(2), nil, "skipped", "not found"},
		{int64(6002), int64(3), nil, "failed", "integrity error"},
		{int64(7000), int64(4), "CASE_000002", "success", nil},
	}, ints(items), "item ids are position × 1000 + index")
	active := tableRowsCols(t, db, `SELECT job_id FROM ediscovery_active_exports`)
	assert.Equal(t, [][]any{{jobB}}, active, "a completed job frees its slot; the running one holds one")
}

func tableRowsCols(t *testing.T, db *database.DB, q string) [][]any {
	t.Helper()
	rows, err := db.Query(q)
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

// ints makes integer cells int64 whatever the driver returned.
func ints(rows [][]any) [][]any {
	for _, r := range rows {
		for i, v := range r {
			switch n := v.(type) {
			case int32:
				r[i] = int64(n)
			case int:
				r[i] = int64(n)
			}
		}
	}
	return rows
}
