package handlers_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/export"
)

// TestExportCancelAndDelete drives a slow job over HTTP: while it runs, its download is
// 409 export_not_ready and its delete 409 invalid_transition; a second job waits pending
// (one export per tenant) and is cancelled there; the running one is cancelled, its
// directory disappears within a second or so, a second cancel is 409; then the delete is
// 204 and the job is gone from every route, while its Bates numbers stay consumed.
func TestExportCancelAndDelete(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d)
		_, ids := f.generate("default", 40, exportPool)
		f.slowExports(25 * time.Millisecond)
		f.start()
		body := exportBody("SLOW", ids)
		body["workers"] = 1
		job := f.createExport(auditorUser, body)
		dir := f.jobDir("default", job.JobID)
		require.Eventually(t, func() bool {
			_, err := os.Stat(dir)
			return f.getExport(auditorUser, job.JobID).Status == export.StatusRunning && err == nil
		}, 30*time.Second, 5*time.Millisecond, "the job runs and writes its directory")
		waiting := f.createExport(auditorUser, exportBody("SLOW", ids[:1]))

		checkCode(t, f, "GET", exportsPath+"/"+job.JobID+"/download", http.StatusConflict, "export_not_ready")
		checkCode(t, f, "DELETE", exportsPath+"/"+job.JobID, http.StatusConflict, "invalid_transition")
		assert.Equal(t, export.StatusPending, f.getExport(auditorUser, waiting.JobID).Status, "one export at a time per tenant")
		assert.Equal(t, export.StatusCancelled, cancelExport(t, f, waiting.JobID).Status, "a pending job is cancelled")

		cancelled := cancelExport(t, f, job.JobID)
		assert.Equal(t, export.StatusCancelled, cancelled.Status)
		assert.Less(t, cancelled.Processed, len(ids), "cancelled before the end")
		require.Eventually(t, func() bool {
			_, err := os.Stat(dir)
			return os.IsNotExist(err)
		}, 3*time.Second, 5*time.Millisecond, "the partial output is removed")
		checkCode(t, f, "POST", exportsPath+"/"+job.JobID+"/cancel", http.StatusConflict, "invalid_transition")

		resp, raw := f.do(exportsPath+"/"+job.JobID, as(auditorUser), withBody(http.MethodDelete, ""))
		require.Equal(t, http.StatusNoContent, resp.StatusCode, "%s", raw)
		assert.Empty(t, raw)
		for _, route := range auditorRoutes {
			if strings.Contains(route.path, "{id}") {
				checkCode(t, f, route.method, strings.ReplaceAll(route.path, "{id}", job.JobID), http.StatusNotFound, "not_found")
			}
		}
		assert.Equal(t, []string{waiting.JobID}, jobIDs(f.listExports(auditorUser, exportsPath)))
		next := f.createExport(auditorUser, exportBody("SLOW", ids[:1]))
		assert.Equal(t, int64(len(ids)+2), next.BatesStart, "the cancelled and deleted jobs' numbers stay consumed")
	})
}

// cancelExport cancels a job as the auditor, requiring 200.
func cancelExport(t *testing.T, f *exportFixture, jobID string) exportJSON {
	t.Helper()
	resp, raw := f.postAs(auditorUser, exportsPath+"/"+jobID+"/cancel", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "cancel: %s", raw)
	var v exportJSON
	decode(t, raw, &v)
	return v
}

// checkCode calls path as the auditor and requires status and the error code.
func checkCode(t *testing.T, f *exportFixture, method, path string, status int, code string) {
	t.Helper()
	resp, raw := f.do(path, as(auditorUser), withBody(method, ""))
	require.Equal(t, status, resp.StatusCode, "%s %s: %s", method, path, raw)
	assert.Equal(t, code, decodeError(t, raw).Error.Code, "%s %s", method, path)
}

// TestExportBodies: docs/api.md on the creation body. 100,000 ids fit in the 1 MiB
// limit and are accepted; one more is validation_failed; a body over 1 MiB is 413; an
// unknown field is invalid_json; every bad value is named at once.
func TestExportBodies(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d) // no background: the jobs stay pending
		ids := idsFrom(1_000_000, export.MaxEmails)
		raw := mustJSON(t, exportBody("BIG", ids))
		require.Less(t, len(raw), 1<<20)
		resp, out := f.postAs(auditorUser, exportPath, raw)
		require.Equal(t, http.StatusCreated, resp.StatusCode, "%.300s", out)
		var big exportJSON
		decode(t, out, &big)
		assert.Equal(t, export.MaxEmails, big.TotalEmails)
		assert.Equal(t, export.MaxEmails, f.getExport(auditorUser, big.JobID).TotalEmails)

		checkBody(t, f, mustJSON(t, exportBody("BIG", idsFrom(1_000_000, export.MaxEmails+1))), http.StatusBadRequest, "validation_failed")
		checkBody(t, f, mustJSON(t, exportBody("BIG", idsFrom(1_000_000, 140_000))), http.StatusRequestEntityTooLarge, "payload_too_large")
		checkBody(t, f, `{"bates_prefix":"X","email_ids":[1],"priority":"high"}`, http.StatusBadRequest, "invalid_json")
		checkBody(t, f, `{"bates_prefix":"X","email_ids":["1"]}`, http.StatusBadRequest, "validation_failed")
		e := checkBody(t, f, `{"bates_prefix":"-x","bates_digits":0,"workers":33,"load_file_format":"xml","date_format":"iso",`+
			`"dat_delimiters":"tab","bates_start_number":-1,"email_ids":[]}`, http.StatusBadRequest, "validation_failed")
		fields, _ := e.Error.Details["fields"].(map[string]any)
		assert.ElementsMatch(t, []string{"bates_prefix", "bates_digits", "workers", "load_file_format", "date_format",
			"dat_delimiters", "bates_start_number", "email_ids"}, keysOf(fields), "every bad field at once")
		assert.Len(t, f.listExports(auditorUser, exportsPath), 1, "only the valid body made a job")
	})
}

func checkBody(t *testing.T, f *exportFixture, body string, status int, code string) errorBody {
	t.Helper()
	resp, raw := f.postAs(auditorUser, exportPath, body)
	require.Equal(t, status, resp.StatusCode, "%.200s: %.300s", body, raw)
	e := decodeError(t, raw)
	assert.Equal(t, code, e.Error.Code, "%.200s", body)
	return e
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
