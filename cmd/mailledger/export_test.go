package main

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// exportView is the part of an export object the binary test reads.
type exportView struct {
	JobID        string  `json:"job_id"`
	Status       string  `json:"status"`
	Processed    int     `json:"processed"`
	ErrorMessage *string `json:"error_message"`
}

// TestExportWithTheBinary runs an export through `mailledger serve`: the auditor exports
// the imported corpus into DIR_EXPORT, downloads the ZIP, and a job caught by SIGTERM is,
// after the next start, completed or failed as interrupted, never left running.
func TestExportWithTheBinary(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		env := baseEnv(t)
		if d != database.SQLite {
			env["DATABASE_URL"] = dbtest.URL(t, d)
		}
		env["MAILLEDGER_BOOTSTRAP_AUDITOR"] = dpoUser + ":" + dpoPassword
		env["MAILLEDGER_PURGE_INTERVAL"] = "0"
		env["DIR_EXPORT"] = filepath.Join(t.TempDir(), "productions")
		env["EDISCOVERY_WORKERS"] = "2"
		r := runBinary(t, env, "import", archivetest.CorpusDir(t))
		require.Equal(t, 1, r.code, "one corpus file is not mail: %s", r.stderr)

		s := startServe(t, env)
		s.waitFor("/readyz", http.StatusOK, 60*time.Second)
		ids := messageIDs(t, s)
		job := createExportOverHTTP(t, s, ids)
		done := awaitExportOverHTTP(t, s, job.JobID, "completed", "failed")
		require.Equal(t, "completed", done.Status, "error: %v", done.ErrorMessage)
		checkDownloadOverHTTP(t, s, job.JobID, len(ids))
		assert.Contains(t, s.stderr.String(), `"level":"INFO","msg":"export completed","job_id":"`+job.JobID+`"`,
			"the completion is logged at info")
		_, err := os.Stat(filepath.Join(env["DIR_EXPORT"], app.DefaultTenant, "ediscovery", job.JobID, "loadfile.csv"))
		assert.NoError(t, err, "the production is under DIR_EXPORT")

		caught := createExportOverHTTP(t, s, ids)
		s.stop(15 * time.Second)
		s = startServe(t, env)
		s.waitFor("/readyz", http.StatusOK, 60*time.Second)
		v := awaitExportOverHTTP(t, s, caught.JobID, "completed", "failed")
		t.Logf("the job caught by SIGTERM ended %s after processing %d", v.Status, v.Processed)
		if v.Status == "failed" {
			require.NotNil(t, v.ErrorMessage)
			assert.Equal(t, app.InterruptedMessage, *v.ErrorMessage)
		}
		s.stop(15 * time.Second)
	})
}

// messageIDs lists the archived messages' ids as the auditor.
func messageIDs(t *testing.T, s *server) []int64 {
	t.Helper()
	status, body, _ := call(t, s, http.MethodGet, "/api/v1/messages?limit=500", dpoUser, dpoPassword, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	var list struct {
		Messages []struct {
			ID int64 `json:"id"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &list))
	require.Greater(t, len(list.Messages), 100)
	ids := make([]int64, len(list.Messages))
	for i, m := range list.Messages {
		ids[i] = m.ID
	}
	return ids
}

func createExportOverHTTP(t *testing.T, s *server, ids []int64) exportView {
	t.Helper()
	body, err := json.Marshal(map[string]any{"bates_prefix": "BIN", "email_ids": ids, "include_text": true,
		"include_attachments": true, "load_file_format": "both"})
	require.NoError(t, err)
	status, raw, _ := call(t, s, http.MethodPost, "/api/v1/ediscovery/export", dpoUser, dpoPassword, string(body))
	require.Equal(t, http.StatusCreated, status, "create: %s", raw)
	var v exportView
	require.NoError(t, json.Unmarshal(raw, &v))
	return v
}

func awaitExportOverHTTP(t *testing.T, s *server, jobID string, statuses ...string) exportView {
	t.Helper()
	var v exportView
	require.Eventually(t, func() bool {
		status, raw, _ := call(t, s, http.MethodGet, "/api/v1/ediscovery/exports/"+jobID, dpoUser, dpoPassword, "")
		require.Equal(t, http.StatusOK, status, "%s", raw)
		require.NoError(t, json.Unmarshal(raw, &v))
		for _, want := range statuses {
			if v.Status == want {
				return true
			}
		}
		return false
	}, 60*time.Second, 20*time.Millisecond, "export %s never reached %v (last %s)", jobID, statuses, v.Status)
	return v
}

// checkDownloadOverHTTP downloads the ZIP and requires one CSV row per email.
func checkDownloadOverHTTP(t *testing.T, s *server, jobID string, emails int) {
	t.Helper()
	status, raw, header := call(t, s, http.MethodGet, "/api/v1/ediscovery/exports/"+jobID+"/download", dpoUser, dpoPassword, "")
	require.Equal(t, http.StatusOK, status, "%.300s", raw)
	assert.Equal(t, "application/zip", header.Get("Content-Type"))
	assert.Equal(t, fmt.Sprintf("attachment; filename=ediscovery-BIN-%s.zip", jobID), header.Get("Content-Disposition"))
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	require.NoError(t, err)
	f, err := zr.Open("loadfile.csv")
	require.NoError(t, err)
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	rows := 0
	for _, rec := range records[1:] {
		if rec[5] == "" { // PARENTID: an email row
			rows++
		}
	}
	assert.Equal(t, emails, rows, "one row per email")
}

// TestExportSettingsAreChecked: a bad export setting stops serve with exit code 2 and a
// line naming it, with the other problems.
func TestExportSettingsAreChecked(t *testing.T) {
	env := baseEnv(t)
	env["EDISCOVERY_WORKERS"] = "64"
	env["EDISCOVERY_MAX_GLOBAL_EXPORTS"] = "zero"
	env["HTTP_ADDR"] = "nowhere"
	r := runBinary(t, env, "serve")
	require.Equal(t, 2, r.code, r.stderr)
	for _, name := range []string{"EDISCOVERY_WORKERS", "EDISCOVERY_MAX_GLOBAL_EXPORTS", "HTTP_ADDR"} {
		assert.Contains(t, r.stderr, name)
	}
}
