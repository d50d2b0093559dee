package handlers_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/production"
)

// loadFileHeader is docs/api.md's load-file column list, in order.
var loadFileHeader = []string{"DOCID", "BEGBATES", "ENDBATES", "BEGATTACH", "ENDATTACH", "PARENTID",
	"ATTACHNUM", "FROM", "TO", "CC", "BCC", "SUBJECT", "DATESENT", "DATERECEIVED", "HASATTACH", "ATTACHCOUNT",
	"ATTACHNAMES", "ATTACHPATH", "NATIVEPATH", "TEXTPATH", "CUSTODIAN", "FILETYPE", "FILEEXT", "FILESIZE",
	"MD5HASH", "SHA256HASH", "MESSAGEID", "INREPLYTO", "REFERENCES", "EMAILID"}

// erasedAddress is the data subject erased before the export; their mail is skipped.
const erasedAddress = "erased@people.test"

var exportPool = []string{"ann@people.test", "bob@people.test", erasedAddress, "cy@other.test"}

// exportUserAgent is the user agent of the downloads, which the download log records.
const exportUserAgent = "exporttest/1.0 (handlers)"

// productionOverHTTP is an export of the corpus with every option on, driven and checked
// over HTTP only.
type productionOverHTTP struct {
	f        *exportFixture
	ids      []int64        // email_ids, in request order
	skipped  map[int64]bool // erased, or not in the archive
	job      exportJSON
	files    map[string][]byte
	emailIDs []int64 // EMAILID of the email rows, in row order
}

// TestExportOverHTTP exports the imported corpus and generated mail with every option on,
// through the API and the real background, downloads the ZIP over HTTP and checks it from
// the outside: a valid ZIP, the CSV read by encoding/csv (BOM, CRLF, exact header), the
// DAT header, every native's SHA-256 and MD5 against its columns and against the original
// served by /api/v1/messages/{id}/raw, the attachment files, erased mail skipped, and one
// download-log row and one ledger event per download.
func TestExportOverHTTP(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		c := &productionOverHTTP{f: newExportFixture(t, d), skipped: map[int64]bool{}}
		c.archive()
		c.f.start()
		c.job = c.f.createExport(auditorUser, map[string]any{
			"bates_prefix": "ACME-PROD", "bates_start_number": 0, "bates_digits": 7, "include_natives": true,
			"include_text": true, "include_attachments": true, "organize_by_custodian": true,
			"load_file_format": "both", "date_format": "eu", "dat_delimiters": "spec", "email_ids": c.ids, "workers": 3,
		})
		c.checkCreated()
		done := c.f.awaitExport(auditorUser, c.job.JobID, export.StatusCompleted, export.StatusFailed)
		require.Equal(t, export.StatusCompleted, done.Status, "error: %v", done.ErrorMessage)
		c.files = c.download()
		c.checkCSV(c.files[production.LoadFileCSV])
		c.checkDATHeader(c.files[production.LoadFileDAT])
		c.checkCompleted(done)
		c.download()
		c.checkDownloadLog(2)
	})
}

// archive imports the corpus, generates mail with attachments, erases one data subject's
// mail, and builds email_ids with an id that does not exist.
func (c *productionOverHTTP) archive() {
	f := c.f
	corpus := f.importCorpus("default")
	mail, gen := f.generate("default", 30, exportPool)
	erased, err := f.arc.Erase(context.Background(), archive.EraseRequest{Tenant: "default", RequestID: "GDPR-2026-00001",
		Addresses: []string{erasedAddress}, Today: time.Now()})
	require.NoError(f.t, err)
	for i, m := range mail {
		if m.Sends(erasedAddress) || m.Receives(erasedAddress) {
			c.skipped[gen[i]] = true
		}
	}
	require.Equal(f.t, len(c.skipped), erased, "the erased messages")
	require.Positive(f.t, erased)
	c.skipped[99_999_999] = true
	c.ids = slices.Concat(gen, corpus, []int64{99_999_999})
}

// checkCreated: the 201 answer is a pending export with exactly the keys of docs/api.md.
func (c *productionOverHTTP) checkCreated() {
	t, v := c.f.t, c.job
	resp, raw := c.f.getAs(auditorUser, exportsPath+"/"+v.JobID)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var shape map[string]json.RawMessage
	decode(t, raw, &shape)
	assert.ElementsMatch(t, exportKeys, keysOf(shape), "export keys")
	assert.ElementsMatch(t, configKeys, keysOf(v.Config), "config keys")
	assert.Equal(t, "default", v.TenantID)
	assert.Equal(t, auditorUser, v.CreatedBy)
	assert.Equal(t, int64(1), v.BatesStart, "the prefix's first use starts at 1")
	assert.Equal(t, len(c.ids), v.TotalEmails)
	assert.Zero(t, v.Progress)
	assert.Nil(t, v.BatesEnd)
	assert.Nil(t, v.CompletedAt)
	assert.Equal(t, "both", v.Config["load_file_format"])
	assert.EqualValues(t, 3, v.Config["workers"])
	_, err := time.Parse(time.RFC3339, v.CreatedAt)
	assert.NoError(t, err, "created_at is RFC 3339")
	assert.True(t, strings.HasSuffix(v.CreatedAt, "Z"), "created_at in UTC: %s", v.CreatedAt)
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// download fetches the ZIP over HTTP as the auditor and opens it.
func (c *productionOverHTTP) download() map[string][]byte {
	t := c.f.t
	resp, body := c.f.do(exportsPath+"/"+c.job.JobID+"/download", as(auditorUser),
		func(r *http.Request) { r.Header.Set("User-Agent", exportUserAgent) })
	require.Equal(t, http.StatusOK, resp.StatusCode, "download: %.300s", body)
	assert.Equal(t, "application/zip", resp.Header.Get("Content-Type"))
	disposition, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
	require.NoError(t, err)
	assert.Equal(t, "attachment", disposition)
	assert.Equal(t, "ediscovery-ACME-PROD-"+c.job.JobID+".zip", params["filename"])
	return unzipAll(t, body)
}

// checkCSV reads the CSV load file as encoding/csv does and checks every row.
func (c *productionOverHTTP) checkCSV(data []byte) {
	t := c.f.t
	require.True(t, bytes.HasPrefix(data, []byte("\xEF\xBB\xBF")), "the CSV starts with a UTF-8 BOM")
	body := data[3:]
	require.True(t, bytes.HasPrefix(body, []byte(strings.Join(loadFileHeader, ",")+"\r\n")), "exact header row")
	require.True(t, bytes.HasSuffix(body, []byte("\r\n")))
	require.NotContains(t, string(bytes.ReplaceAll(body, []byte("\r\n"), nil)), "\n", "every line ends with CRLF")
	r := csv.NewReader(bytes.NewReader(body))
	r.FieldsPerRecord = len(loadFileHeader)
	records, err := r.ReadAll()
	require.NoError(t, err, "encoding/csv reads the load file")
	named := map[string]bool{production.LoadFileCSV: true, production.LoadFileDAT: true}
	rows := 0
	for _, rec := range records[1:] {
		row := map[string]string{}
		for i, col := range loadFileHeader {
			row[col] = rec[i]
		}
		c.checkFile(row, named)
		rows++
	}
	c.checkEmails()
	assert.Len(t, c.files, len(named), "the ZIP holds the load files and the files they name, nothing else")
	c.f.t.Logf("%d rows, %d emails, %d files", rows, len(c.emailIDs), len(c.files))
}

// checkFile checks one row's file: its hashes and size match the row, a native matches
// the original over HTTP, and its text and attachment files are in the ZIP.
func (c *productionOverHTTP) checkFile(row map[string]string, named map[string]bool) {
	t := c.f.t
	data, ok := c.files[row["NATIVEPATH"]]
	require.True(t, ok, "%s: %s is in the ZIP", row["DOCID"], row["NATIVEPATH"])
	named[row["NATIVEPATH"]] = true
	sum, md := sha256.Sum256(data), md5.Sum(data)
	assert.Equal(t, hex.EncodeToString(sum[:]), row["SHA256HASH"], row["DOCID"])
	assert.Equal(t, hex.EncodeToString(md[:]), row["MD5HASH"], row["DOCID"])
	assert.Equal(t, strconv.Itoa(len(data)), row["FILESIZE"], row["DOCID"])
	folder := production.CustodianFolder(row["CUSTODIAN"])
	assert.True(t, strings.HasPrefix(row["NATIVEPATH"], folder+"/"), "%s sits in its custodian's folder", row["NATIVEPATH"])
	if row["PARENTID"] != "" {
		assert.True(t, strings.HasPrefix(row["DOCID"], row["PARENTID"]+"_"), "attachment %s of %s", row["DOCID"], row["PARENTID"])
		return
	}
	id, err := strconv.ParseInt(row["EMAILID"], 10, 64)
	require.NoError(t, err)
	c.emailIDs = append(c.emailIDs, id)
	resp, original := c.f.getAs(auditorUser, "/api/v1/messages/"+sprint(id)+"/raw")
	require.Equal(t, http.StatusOK, resp.StatusCode, "raw of %d", id)
	assert.Equal(t, original, data, "the native of %s is the archived original, byte for byte", row["DOCID"])
	_, ok = c.files[row["TEXTPATH"]]
	assert.True(t, ok, "text of %s at %s", row["DOCID"], row["TEXTPATH"])
	named[row["TEXTPATH"]] = true
	if row["ATTACHPATH"] != "" {
		for _, p := range strings.Split(row["ATTACHPATH"], "; ") {
			assert.Contains(t, c.files, p, "attachment of %s", row["DOCID"])
		}
	}
}

// checkEmails: the email rows are the ids that were not skipped, in email_ids order,
// numbered one after another.
func (c *productionOverHTTP) checkEmails() {
	var want []int64
	for _, id := range c.ids {
		if !c.skipped[id] {
			want = append(want, id)
		}
	}
	assert.Equal(c.f.t, want, c.emailIDs, "one row per produced email, in email_ids order; erased mail is skipped")
}

// checkDATHeader: the DAT has the default (spec) delimiters, no BOM, a CRLF header row and as
// many lines as the CSV has records.
func (c *productionOverHTTP) checkDATHeader(data []byte) {
	t := c.f.t
	header := "\u00B6" + strings.Join(loadFileHeader, "\u00B6\u00FE\u00B6") + "\u00B6\r\n"
	require.True(t, bytes.HasPrefix(data, []byte(header)), "DAT header row: %.80q", data)
	csvRecords, err := csv.NewReader(bytes.NewReader(c.files[production.LoadFileCSV][3:])).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, len(csvRecords), bytes.Count(data, []byte("\r\n")), "DAT lines")
}

// checkCompleted: the completed export's counts, range and skipped items.
func (c *productionOverHTTP) checkCompleted(v exportJSON) {
	t := c.f.t
	assert.Equal(t, len(c.ids), v.Processed)
	assert.Zero(t, v.Failed)
	assert.InDelta(t, 1.0, v.Progress, 1e-9)
	require.NotNil(t, v.BatesEnd)
	assert.Equal(t, int64(len(c.emailIDs)), *v.BatesEnd, "bates_end is the last number produced")
	require.NotNil(t, v.CompletedAt)
	require.NotNil(t, v.StartedAt)
	require.NotNil(t, v.ManifestHash)
	var total int64
	for _, b := range c.files {
		total += int64(len(b))
	}
	assert.Equal(t, &total, v.OutputSize, "output_size is the size of the files")
	skipped := c.f.countRows(`SELECT COUNT(*) FROM ediscovery_export_items WHERE job_id = ? AND status = ?`, v.JobID, export.ItemSkipped)
	assert.Equal(t, len(c.skipped), skipped, "erased and unknown ids are skipped items")
	_, err := os.Stat(c.f.jobDir("default", v.JobID))
	assert.NoError(t, err, "the production is under DIR_EXPORT/<tenant>/ediscovery/<job_id>")
	assert.Equal(t, []string{v.JobID}, jobIDs(c.f.listExports(auditorUser, exportsPath)))
}

// checkDownloadLog: each download is one row of the download log (user, time, client IP,
// user agent) and one ledger event.
func (c *productionOverHTTP) checkDownloadLog(downloads int) {
	t := c.f.t
	rows, err := c.f.db.Query(c.f.db.Rebind(`SELECT downloaded_by, ip_address, user_agent, downloaded_at FROM ediscovery_download_log WHERE job_id = ?`), c.job.JobID)
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var by, ip, ua string
		var at any
		require.NoError(t, rows.Scan(&by, &ip, &ua, &at))
		assert.Equal(t, []string{auditorUser, "127.0.0.1", exportUserAgent}, []string{by, ip, ua})
		assert.NotNil(t, at)
		n++
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, downloads, n, "download log rows")
	assert.Equal(t, downloads, c.f.countRows(`SELECT COUNT(*) FROM events WHERE event_type = ? AND stream_id = ?`,
		export.EventDownloaded, export.StreamID(c.job.JobID)), "download events in the ledger")
}

// TestExportNumberingOverHTTP: two jobs on one prefix continue the numbering, an explicit
// start that overlaps issued numbers is 409 bates_range_conflict (and appends nothing),
// and the prefix lists show the sequence.
func TestExportNumberingOverHTTP(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d)
		_, ids := f.generate("default", 5, exportPool)
		first := f.createExport(auditorUser, exportBody("CASE-7", ids[:3]))
		second := f.createExport(auditorUser, exportBody("CASE-7", ids[3:]))
		assert.Equal(t, []int64{1, 4}, []int64{first.BatesStart, second.BatesStart}, "the second job continues after the first")
		before := f.countRows(`SELECT COUNT(*) FROM events`)
		body := exportBody("CASE-7", ids[:2])
		body["bates_start_number"] = 5
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		resp, out := f.postAs(auditorUser, exportPath, string(raw))
		require.Equal(t, http.StatusConflict, resp.StatusCode, "%s", out)
		assert.Equal(t, "bates_range_conflict", decodeError(t, out).Error.Code)
		assert.Equal(t, before, f.countRows(`SELECT COUNT(*) FROM events`), "a conflict appends nothing (the jobs wait for the background)")
		body["bates_start_number"] = 6
		third := f.createExport(auditorUser, body)
		assert.Equal(t, int64(6), third.BatesStart)
		f.start()
		for _, job := range []exportJSON{first, second, third} {
			done := f.awaitExport(auditorUser, job.JobID, export.StatusCompleted)
			require.NotNil(t, done.BatesEnd)
			assert.Equal(t, job.BatesStart+int64(job.TotalEmails)-1, *done.BatesEnd, "job %s", job.JobID)
		}
		for _, list := range [][]prefixJSON{f.prefixes(auditorUser, prefixesPath), f.prefixes(adminUser, adminPrefixesPath)} {
			require.Len(t, list, 1)
			assert.Equal(t, "CASE-7", list[0].Prefix)
			assert.Equal(t, int64(7), list[0].LastNumber)
			_, err := time.Parse(time.RFC3339, list[0].UpdatedAt)
			assert.NoError(t, err)
		}
	})
}

// TestExportDownloadNeedsCompletion: a pending export's download is 409 export_not_ready
// and records nothing.
func TestExportDownloadNeedsCompletion(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t, database.SQLite)
	_, ids := f.generate("default", 2, exportPool)
	job := f.createExport(auditorUser, exportBody("WAIT", ids)) // no background: it stays pending
	resp, raw := f.getAs(auditorUser, exportsPath+"/"+job.JobID+"/download")
	require.Equal(t, http.StatusConflict, resp.StatusCode, "%s", raw)
	assert.Equal(t, "export_not_ready", decodeError(t, raw).Error.Code)
	assert.Zero(t, f.countRows(`SELECT COUNT(*) FROM ediscovery_download_log`))
	resp, raw = f.do(exportsPath+"/"+job.JobID+"/download", as(auditorUser), func(r *http.Request) { r.Method = http.MethodHead })
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "HEAD would record a download without one: %s", raw)
	assert.Equal(t, "GET", resp.Header.Get("Allow"))
}
