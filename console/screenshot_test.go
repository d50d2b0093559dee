package console_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
)

// shotWidth is the browser width of the screenshots, in CSS pixels.
const shotWidth = 1280

// maxShotBytes bounds each PNG, so that the repository stays small.
const maxShotBytes = 300 << 10

// shotObjects are the fixture's objects the pages show.
type shotObjects struct {
	message   int64 // a message with a long subject and long addresses
	html      int64 // an HTML message with a remote image
	completed string
	overdue   string
	exportIDs []int64 // the auditor's tenant's messages, all in exportJob
	exportJob string  // a completed export
}

// screenshotPages are the pages TestScreenshots captures, in order, as the global
// administrator, each into docs/console/<name>.png. A page added to the console is one
// line here.
var screenshotPages = []struct {
	name string
	path func(shotObjects) string
}{
	{"archive-search", func(shotObjects) string { return "/archive?go=1" }},
	{"message", func(o shotObjects) string { return fmt.Sprintf("/archive/messages/%d", o.message) }},
	{"message-html", func(o shotObjects) string { return fmt.Sprintf("/archive/messages/%d", o.html) }},
	{"restore-confirm", func(o shotObjects) string {
		return fmt.Sprintf("/archive/messages/%d/restore?to=legal@example.test", o.message)
	}},
	{"gdpr-requests", func(shotObjects) string { return "/compliance/gdpr?sort=due" }},
	{"gdpr-request", func(o shotObjects) string { return "/compliance/gdpr/" + o.completed }},
	{"gdpr-request-overdue", func(o shotObjects) string { return "/compliance/gdpr/" + o.overdue }},
	{"gdpr-requests-empty", func(shotObjects) string { return "/compliance/gdpr?status=executing" }},
	{"holds", func(shotObjects) string { return "/compliance/holds" }},
	{"not-found", func(shotObjects) string { return "/archive/messages/999999" }},
	{"admin", func(shotObjects) string { return "/admin" }},
	{"admin-customers", func(shotObjects) string { return "/admin/customers" }},
	{"admin-users", func(shotObjects) string { return "/admin/users" }},
	{"admin-user-new", func(shotObjects) string { return "/admin/users/new" }},
	{"admin-domains", func(shotObjects) string { return "/admin/domains" }},
	{"admin-groups", func(shotObjects) string { return "/admin/groups" }},
	{"admin-header-checks", func(shotObjects) string { return "/admin/header-checks" }},
	{"ledger", func(shotObjects) string { return "/ledger" }},
}

// auditorPages are the pages TestScreenshots captures after them as an auditor of the
// tenant that has an export (exports are the auditors' alone).
var auditorPages = []struct {
	name string
	path func(shotObjects) string
}{
	{"archive-search-auditor", func(shotObjects) string { return "/archive?go=1" }},
	{"export-new", func(o shotObjects) string {
		return fmt.Sprintf("/compliance/exports/new?id=%d&id=%d&bates_prefix=ACME", o.exportIDs[0], o.exportIDs[1])
	}},
	{"exports", func(shotObjects) string { return "/compliance/exports" }},
	{"export", func(o shotObjects) string { return "/compliance/exports/" + o.exportJob }},
}

// TestScreenshots captures full-page PNGs of the console's main pages, 1280 pixels wide,
// into the directory CONSOLE_SCREENSHOTS names (make screenshots: docs/console). It runs
// only when asked, CI=true or not; then without chromium it is skipped, or fails under
// CI=true. A page wider than the window (something overflowing) fails it.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("CONSOLE_SCREENSHOTS")
	if dir == "" {
		t.Skip("CONSOLE_SCREENSHOTS is not set: no screenshots taken (make screenshots)")
	}
	exe := chromiumPath(t)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	f := newFixture(t, database.SQLite)
	f.withSink()
	o := screenshotFixture(t, f)
	ctx := headless(t, exe, shotWidth, 2*time.Minute)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/login"), chromedp.WaitVisible(`#username`)))
	capture(ctx, t, dir, "login")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(`#username`, adminUser),
		chromedp.SendKeys(`#password`, password),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`header form.tenant`),
	))
	for _, p := range screenshotPages {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.http.URL+p.path(o)), chromedp.WaitVisible(`main h1`)), p.name)
		capture(ctx, t, dir, p.name)
	}
	require.NoError(t, chromedp.Do(ctx, // the restore's outcome: the confirm page's button
		chromedp.Navigate(f.http.URL+screenshotPages[3].path(o)),
		chromedp.Click(`form.stack button.primary`),
		chromedp.WaitVisible(`p.notice`)))
	capture(ctx, t, dir, "restore-sent")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`form[action="/logout"] button`),
		chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, auditorUser),
		chromedp.SendKeys(`#password`, password),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`main h1`),
	))
	for _, p := range auditorPages {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.http.URL+p.path(o)), chromedp.WaitVisible(`main h1`)), p.name)
		capture(ctx, t, dir, p.name)
	}
}

// overflowing lists the elements of main that reach past its right edge (a table or a
// long word wider than the column).
const overflowing = `(() => {
  const main = document.querySelector("main"), right = main.getBoundingClientRect().right + 1;
  return Array.from(main.querySelectorAll("*")).filter(e => e.getBoundingClientRect().right > right)
    .map(e => e.tagName + (e.className ? "." + e.className : "") + ": " + (e.textContent || "").slice(0, 40));
})()`

// capture writes a full-page PNG of the current page to dir/name.png.
func capture(ctx context.Context, t *testing.T, dir, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err, name)
	cfg, err := png.DecodeConfig(bytes.NewReader(buf))
	require.NoError(t, err, name)
	assert.Equal(t, shotWidth, cfg.Width, "%s: the page is wider than the window: something overflows", name)
	assert.Less(t, len(buf), maxShotBytes, "%s: %d bytes", name, len(buf))
	over, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflowing))
	require.NoError(t, err, name)
	assert.Empty(t, over, "%s: elements stick out of the page's main column", name)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644))
}

// screenshotFixture fills the default tenant (the administrator's archive): messages with
// long subjects and addresses, an HTML message, GDPR requests pending, approved,
// rejected, extended, completed and overdue, and holds active and released.
func screenshotFixture(t *testing.T, f *fixture) shotObjects {
	t.Helper()
	ctx := context.Background()
	sent := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	longAddr := "procurement.department.northern.region.escalations@subsidiary-with-a-long-name.example.test"
	long := archivetest.Message("Quarterly Reporting <reporting@example.test>", []string{longAddr, userAddress}, []string{"cfo@example.test"},
		"Re: Re: Fwd: Q3 reconciliation of the intercompany accounts (Germany, Austria, Switzerland) — please confirm the figures before the board meeting on Friday",
		"Hello,\n\nplease find the reconciled figures below.\n\nReference: "+strings.Repeat("0123456789abcdef", 8)+"\n", sent)
	html := "From: Newsletter <news@example.test>\r\nTo: " + userAddress + "\r\nSubject: Product update, November\r\nDate: Fri, 20 Nov 2026 08:00:00 +0000\r\n" +
		"Message-ID: <news-1@example.test>\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" +
		"<h2>What is new</h2><p>Faster search, <b>clearer</b> certificates.</p><img src=\"https://tracker.example.com/pixel.gif\" alt=\"tracker\"><p><a href=\"https://example.com/\">Read more</a></p>\r\n"
	ids := f.archiveMail(app.DefaultTenant, string(long), html,
		string(archivetest.Message("subject@example.test", []string{"hr@example.test"}, nil, "My personal data", "Please erase it.", sent.Add(time.Hour))),
		string(archivetest.WithAttachment("hr@example.test", "subject@example.test", "Contract", "Attached.", "contract.pdf", []byte("%PDF-1.4 test"), sent.Add(2*time.Hour))),
		mail("alice@example.test", "bob@example.test", "Lunch on Thursday", "12:30?"))

	creator, approver := domain.Metadata{Actor: auditorUser, ClientIP: "192.0.2.10"}, domain.Metadata{Actor: approverUser, ClientIP: "192.0.2.11"}
	create := func(addr, name string) string {
		v, err := f.app.Erasure.Create(ctx, app.DefaultTenant, app.CreateRequestInput{EmailAddresses: []string{addr}, RequesterName: name}, creator)
		require.NoError(t, err)
		f.drain()
		return v.RequestID
	}
	must := func(_ *app.RequestView, err error) { t.Helper(); require.NoError(t, err) }
	o := shotObjects{message: ids[0], html: ids[1]}
	o.completed = create("subject@example.test", "Dana Subject")
	v, err := f.app.Erasure.Get(ctx, app.DefaultTenant, o.completed)
	require.NoError(t, err)
	must(f.app.Erasure.ExtendDeadline(ctx, app.DefaultTenant, o.completed, v.CreatedAt.AddDate(0, 0, 45), "two backup sets to search first", creator))
	must(f.app.Erasure.Approve(ctx, app.DefaultTenant, o.completed, approver))
	must(f.app.Erasure.Execute(ctx, app.DefaultTenant, o.completed, approver))
	f.drain()
	approved := create("former.employee@example.test", "Former Employee")
	must(f.app.Erasure.Approve(ctx, app.DefaultTenant, approved, approver))
	rejected := create("customer@example.test", "A Customer")
	must(f.app.Erasure.Reject(ctx, app.DefaultTenant, rejected, "no legal basis: the contract is still running", approver))
	o.overdue = create(longAddr, "Long Address")
	create("pending@example.test", "Pending Person")
	_, err = f.app.LegalHolds.Place(ctx, app.DefaultTenant, app.PlaceHoldInput{Type: "domain", Value: "litigation.example.test", Reason: "Smith v. Example Ltd, preserve all correspondence", Matter: "2026-CV-0142"}, creator)
	require.NoError(t, err)
	released, err := f.app.LegalHolds.Place(ctx, app.DefaultTenant, app.PlaceHoldInput{Type: "address", Value: "cfo@example.test", Reason: "internal audit", Matter: "IA-7"}, creator)
	require.NoError(t, err)
	_, err = f.app.LegalHolds.Release(ctx, app.DefaultTenant, released.ID, approver)
	require.NoError(t, err)
	f.drain()
	o.exportIDs, o.exportJob = shotExport(t, f)
	f.makeAdminObjects()
	f.siteObjects(strings.TrimPrefix(f.http.URL, "http://"), "console")
	// a month and a day later: the open requests are overdue, the extended one is not
	f.clock.advance(v.CreatedAt.AddDate(0, 0, 31).Sub(f.clock.Now()))
	return o
}

// shotExport archives three messages in the auditor's tenant and exports them, and
// returns their ids and the completed export's job id.
func shotExport(t *testing.T, f *fixture) ([]int64, string) {
	t.Helper()
	sent := time.Date(2026, 11, 18, 14, 0, 0, 0, time.UTC)
	ids := f.archiveMail(tenant,
		string(archivetest.Message("cfo@example.test", []string{"board@example.test"}, nil, "Board pack, November", "Attached are the figures.", sent)),
		string(archivetest.WithAttachment("counsel@lawfirm.example", "cfo@example.test", "Draft settlement", "Privileged.", "settlement.pdf", []byte("%PDF-1.4 draft"), sent.Add(time.Hour))),
		mail("cfo@example.test", "auditor@example.test", "Re: Draft settlement", "Noted."))
	f.startExports()
	prefix := "ACME"
	v, err := f.app.Exports.Create(context.Background(), tenant, export.Request{BatesPrefix: &prefix, EmailIDs: ids},
		domain.Metadata{Actor: auditorUser, ClientIP: "192.0.2.10"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return f.exportStatus(tenant, v.JobID) == "completed" }, 30*time.Second, 20*time.Millisecond)
	return ids, v.JobID
}
