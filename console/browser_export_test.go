package console_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
)

// TestBrowserExport exports in a real, headless Chromium: log in, search, tick two of
// three results, open the export dialog, see where the prefix continues, create the
// export, let its page reload itself (meta refresh, no script) until it is completed,
// download the ZIP as the browser does, and check it holds the natives and load files of
// exactly the two ticked messages.
func TestBrowserExport(t *testing.T) {
	if testing.Short() {
		t.Skip("a real browser: not in -short")
	}
	exe := chromiumPath(t)
	f := newFixture(t, database.SQLite)
	raws := []string{mail("a@example.test", userAddress, "evidence one", "browser export"),
		mail("b@example.test", userAddress, "evidence two", "browser export"),
		mail("c@example.test", userAddress, "evidence three", "browser export")}
	ids := f.archiveMail(tenant, raws...)
	f.startExports()

	ctx := headless(t, exe, 1280, 90*time.Second)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(f.http.URL+"/archive"),
		chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, auditorUser),
		chromedp.SendKeys(`#password`, password),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`#q`),
		chromedp.SendKeys(`#q`, "evidence"),
		chromedp.Submit(`#q`),
		chromedp.WaitVisible(`#results`),
		chromedp.Click(fmt.Sprintf(`#select-%d`, ids[0])),
		chromedp.Click(fmt.Sprintf(`#select-%d`, ids[2])),
		chromedp.Click(`#export-selected`),
		chromedp.WaitVisible(`#bates_prefix`),
		chromedp.SendKeys(`#bates_prefix`, "BRW"),
		chromedp.Click(`#preview`),
		chromedp.WaitVisible(`#continuation strong`),
		chromedp.SetValue(`#load_file_format`, "both"),
	))
	continuation, err := chromedp.Run(ctx, chromedp.Text(`#continuation`))
	require.NoError(t, err)
	assert.Contains(t, continuation, "has not used BRW yet")
	selection, err := chromedp.Run(ctx, chromedp.Value(`#email_ids`))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{fmt.Sprint(ids[0]), fmt.Sprint(ids[2])}, strings.Fields(selection), "the dialog carries the ticked messages")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`#create`),
		chromedp.WaitVisible(`#status`),
		chromedp.WaitVisible(`#download`), // shown once completed; the page reloads itself until then
	))
	status, err := chromedp.Run(ctx, chromedp.Text(`#status`))
	require.NoError(t, err)
	require.Equal(t, "completed", status)

	dir := t.TempDir()
	progress := chromedp.Events(ctx, cdpbrowser.DownloadProgress)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			events := true
			_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
				Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events})
			return err
		}),
		chromedp.Click(`#download`),
	))
	var file string
	for ev, err := range progress {
		require.NoError(t, err)
		require.NotEqual(t, cdpbrowser.DownloadProgressStateCanceled, ev.State, "the browser cancelled the download")
		if ev.State == cdpbrowser.DownloadProgressStateCompleted {
			file = filepath.Join(dir, ev.GUID)
			break
		}
	}
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	checkProduction(t, raw, "BRW", map[int64]string{ids[0]: raws[0], ids[2]: raws[2]})
}
