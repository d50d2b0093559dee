package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/export"
)

// refreshMeta is the tag that reloads a page while an export runs.
const refreshMeta = `<meta http-equiv="refresh" content="3">`

// TestExportFlow: an auditor ticks messages in the archive, opens the export dialog, is
// refused for bad options (nothing created), creates the export, watches it go from
// pending (the pages reload themselves) to completed, downloads the ZIP (the natives and
// load files of exactly the selected emails), finds the download in the log, sees where
// the prefix continues, and deletes the export behind a confirm page. The other tenant's
// auditor gets 404 for it, the roles that may not export 403.
func TestExportFlow(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		raws := []string{mail("a@example.test", userAddress, "case one", "discovery words"),
			mail("b@example.test", userAddress, "case two", "discovery words"),
			mail("c@example.test", userAddress, "case three", "discovery words")}
		ids := f.archiveMail(tenant, raws...)
		f.archiveMail(otherTenant, mail("x@other.test", "y@other.test", "case other", "discovery words"))
		b := f.login(auditorUser)

		resp, page := b.get("/archive?q=discovery")
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, page, "Export selected…")
		assert.Contains(t, page, "/compliance/exports/new?q=discovery&amp;search=1")
		for _, id := range ids {
			assert.Contains(t, page, fmt.Sprintf(`name="id" value="%d"`, id))
		}

		selected := map[int64]string{ids[0]: raws[0], ids[2]: raws[2]}
		resp, page = b.get(fmt.Sprintf("/compliance/exports/new?id=%d&id=%d", ids[0], ids[2]))
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, page, "2 emails")
		assert.Contains(t, page, fmt.Sprintf("%d\n%d</textarea>", ids[0], ids[2]))
		assert.Regexp(t, `id="bates_digits" name="bates_digits" value="6"`, page)
		assert.Regexp(t, `id="include_natives" name="include_natives" value="1" checked`, page)
		assert.Regexp(t, `<option value="csv" selected>csv</option>`, page)

		form := url.Values{"email_ids": {fmt.Sprintf("%d\n%d", ids[0], ids[2])}, "bates_prefix": {"-CASE"},
			"bates_start_number": {"0"}, "bates_digits": {"6"}, "workers": {"lots"}, "include_natives": {"1"},
			"load_file_format": {"both"}, "date_format": {"iso8601"}, "dat_delimiters": {"spec"}}
		resp, page = b.submit("/compliance/exports/new", form)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, page)
		assert.Contains(t, page, "The export was not created.")
		assert.Contains(t, page, "<strong>bates_prefix</strong>: starts with &#39;-&#39;")
		assert.Contains(t, page, "<strong>workers</strong>: &#34;lots&#34; is not a whole number")
		assert.Contains(t, page, `value="-CASE"`, "the form keeps what was typed")
		list, err := f.app.Exports.List(context.Background(), tenant)
		require.NoError(t, err)
		assert.Empty(t, list.Exports, "a refused export creates nothing")

		form.Set("bates_prefix", "CASE")
		form.Set("workers", "2")
		form.Set("action", "preview")
		resp, page = b.submit("/compliance/exports/new", form)
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, page, "This tenant has not used <strong>CASE</strong> yet")

		form.Set("action", "create")
		resp, _ = b.submit("/compliance/exports/new", form)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		path := resp.Header.Get("Location")
		jobID := strings.TrimPrefix(path, "/compliance/exports/")
		require.Regexp(t, `^[0-9a-f-]{36}$`, jobID)

		resp, page = b.get(path)
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, page, `<strong id="status">pending</strong>`, "no job runs before the runner starts")
		assert.Contains(t, page, refreshMeta, "a pending export's page reloads itself")
		_, listPage := b.get("/compliance/exports")
		assert.Contains(t, listPage, refreshMeta)
		assert.Contains(t, listPage, jobID)

		f.startExports()
		page = b.awaitExportPage(path, "completed")
		assert.NotContains(t, page, refreshMeta, "a completed export's page stays still")
		assert.Contains(t, page, "100%")
		assert.Contains(t, page, "2 of 2 emails processed, 0 failed")
		assert.Contains(t, page, "<dt>Load file</dt><dd>both</dd>")
		assert.Contains(t, page, "<dt>Workers</dt><dd>2</dd>")
		assert.Contains(t, page, "Not downloaded yet.")

		resp, zipBody := b.get(path + "/download")
		require.Equal(t, http.StatusOK, resp.StatusCode, zipBody)
		assert.Equal(t, "application/zip", resp.Header.Get("Content-Type"))
		assert.Contains(t, resp.Header.Get("Content-Disposition"), app.ExportFileName("CASE", jobID))
		checkProduction(t, []byte(zipBody), "CASE", selected)

		head, err := b.c.Head(f.http.URL + path + "/download")
		require.NoError(t, err)
		require.NoError(t, head.Body.Close())
		assert.Equal(t, http.StatusMethodNotAllowed, head.StatusCode, "a HEAD would record a download without one")

		log, err := f.app.Exports.DownloadLog(context.Background(), tenant, jobID)
		require.NoError(t, err)
		require.Len(t, log, 1, "the download is in the download log")
		assert.Equal(t, auditorUser, log[0].DownloadedBy)
		_, page = b.get(path)
		assert.Regexp(t, `<tr class="download"><td>auditor</td><td>[^<]+ UTC</td><td>127\.0\.0\.1</td><td>Go-http-client/1\.1</td></tr>`, page)
		assert.Equal(t, 1, f.countEvents(export.EventDownloaded))

		resp, page = b.submit("/compliance/exports/new", url.Values{"bates_prefix": {"CASE"}, "action": {"preview"}})
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, `continues from <strong id="next-bates">3</strong> (last issued: 2)`)

		other := f.login(otherAuditor)
		for _, p := range []string{path, path + "/download", path + "/delete", path + "/cancel"} {
			resp, page := other.get(p)
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, "another tenant's %s", p)
			assert.NotContains(t, page, "CASE")
		}
		resp, _ = other.submit(path+"/delete", nil)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		for _, user := range []string{adminUser, plainUser, customerAdmin} {
			nb := f.login(user)
			resp, _ := nb.get("/compliance/exports")
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s may not export", user)
			resp, _ = nb.submit("/compliance/exports/new", form)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s may not create an export", user)
			_, archivePage := nb.get("/archive?q=discovery")
			assert.NotContains(t, archivePage, "Export selected…", "%s sees no export button", user)
		}

		resp, page = b.get(path + "/delete")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, "Confirm: delete")
		resp, _ = b.submit(path+"/delete", nil)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, "/compliance/exports", resp.Header.Get("Location"))
		resp, _ = b.get(path)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "a deleted export is gone")
		_, err = f.app.Exports.Get(context.Background(), tenant, jobID)
		assert.ErrorIs(t, err, app.ErrNotFound)
	})
}

// TestExportEverySearchResult: the dialog of "every result of this search" names every
// match of the search in the caller's tenant, and the search is recorded as any other.
func TestExportEverySearchResult(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	ids := f.archiveMail(tenant, mail("a@example.test", userAddress, "alpha one", "needle"),
		mail("b@example.test", userAddress, "alpha two", "needle"), mail("c@example.test", userAddress, "beta", "hay"))
	f.archiveMail(otherTenant, mail("x@other.test", "y@other.test", "alpha other", "needle"))
	b := f.login(auditorUser)
	searches := f.countEvents(app.EventMessagesSearched)
	resp, page := b.get("/compliance/exports/new?search=1&q=needle")
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	assert.Contains(t, page, "2 emails — every result of the search words &#34;needle&#34;")
	got := regexp.MustCompile(`<textarea id="email_ids" name="email_ids" rows="4">([^<]*)</textarea>`).FindStringSubmatch(page)
	require.NotNil(t, got, page)
	assert.ElementsMatch(t, []string{fmt.Sprint(ids[0]), fmt.Sprint(ids[1])}, strings.Fields(got[1]))
	assert.Equal(t, searches+1, f.countEvents(app.EventMessagesSearched), "the search is in the ledger")
}

// TestExportCancelAndCSRF: a pending export is cancelled behind its confirm page; a POST
// without the session's token creates and cancels nothing; an invalid prefix's preview
// says why.
func TestExportCancelAndCSRF(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	ids := f.archiveMail(tenant, mail("a@example.test", userAddress, "pending one", "x"))
	b := f.login(auditorUser)
	form := url.Values{"email_ids": {fmt.Sprint(ids[0])}, "bates_prefix": {"PEND"}, "include_natives": {"1"}}
	resp, page := b.post("/compliance/exports/new", form)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, page, "CSRF")
	list, err := f.app.Exports.List(context.Background(), tenant)
	require.NoError(t, err)
	require.Empty(t, list.Exports)

	resp, page = b.submit("/compliance/exports/new", url.Values{"bates_prefix": {"A B"}, "action": {"preview"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, "a preview is no refusal")
	assert.Contains(t, page, "Not a valid prefix: character &#39; &#39; at position 2 is not allowed")

	resp, _ = b.submit("/compliance/exports/new", form)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	path := resp.Header.Get("Location")
	jobID := strings.TrimPrefix(path, "/compliance/exports/")
	resp, _ = b.post(path+"/cancel", url.Values{"csrf": {strings.Repeat("A", 43)}})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, "pending", f.exportStatus(tenant, jobID))
	resp, page = b.get(path + "/cancel")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, page, "Confirm: cancel")
	resp, _ = b.submit(path+"/cancel", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "cancelled", f.exportStatus(tenant, jobID))
	resp, _ = b.submit(path+"/cancel", nil)
	assert.Equal(t, http.StatusConflict, resp.StatusCode, "a cancelled export does not cancel again")
	resp, _ = b.get(path + "/download")
	assert.Equal(t, http.StatusConflict, resp.StatusCode, "a cancelled export does not download")
}
