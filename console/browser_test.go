package console_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
)

// chromiumPath finds Debian's chromium; without it the test is skipped, loudly, except
// under CI=true, where it fails.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true and no chromium: install it (apt-get install chromium)")
	}
	t.Skip("SKIPPED: no chromium on PATH; the console's browser test did not run (apt-get install chromium)")
	return ""
}

// TestBrowserLoginAndSearch logs in and searches in a real, headless Chromium: the
// redirect to the login form and back, the form, the cookie, the search and its table.
func TestBrowserLoginAndSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("a real browser: not in -short")
	}
	exe := chromiumPath(t)
	f := newFixture(t, database.SQLite)
	f.archiveMail(tenant, mail("boss@example.test", userAddress, "browser hello", "seen in chromium"),
		mail("boss@example.test", "someone@example.test", "browser secret", "not the user's"))

	ctx := headless(t, exe, 1280, 60*time.Second)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(f.http.URL+"/archive"),
		chromedp.WaitVisible(`#username`),
	))
	loginHeading, err := chromedp.Run(ctx, chromedp.Text(`h1`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(`#username`, plainUser),
		chromedp.SendKeys(`#password`, password),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`#q`),
		chromedp.SendKeys(`#q`, "browser"),
		chromedp.Submit(`#q`),
		chromedp.WaitVisible(`#results`),
	))
	table, err := chromedp.Run(ctx, chromedp.Text(`main table`))
	require.NoError(t, err)
	url, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, "Log in", loginHeading)
	assert.Contains(t, url, "/archive?q=browser")
	assert.Contains(t, table, "browser hello")
	assert.NotContains(t, table, "browser secret", "a user sees only their own mail")
}

// TestBrowserAdminAndLedger, in a real headless Chromium: the global administrator adds
// an auditor through the Administration pages and logs out; the new auditor logs in with
// the password the form set, and runs the ledger verification with its button, the page
// refreshing itself (no script) until the result is OK.
func TestBrowserAdminAndLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("a real browser: not in -short")
	}
	exe := chromiumPath(t)
	f := newFixture(t, database.SQLite)
	f.makeObjects(tenant, "subject@example.test")

	ctx := headless(t, exe, 1280, 90*time.Second)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(f.http.URL+"/admin/users/new"),
		chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, adminUser),
		chromedp.SendKeys(`#password`, password),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`#f-username`),
		chromedp.SendKeys(`#f-username`, "browser-auditor"),
		chromedp.SendKeys(`#f-email`, "browser-auditor@example.test"),
		chromedp.SendKeys(`#f-domain`, tenant),
		chromedp.SendKeys(`#f-password`, "typed in chromium"),
		chromedp.SetValue(`#f-isadmin`, "2"),
		chromedp.Click(`#submit`),
		chromedp.WaitVisible(`#admin-list`),
	))
	list, err := chromedp.Run(ctx, chromedp.Text(`#admin-list`))
	require.NoError(t, err)
	assert.Contains(t, list, "browser-auditor@example.test")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`header .who button`),
		chromedp.WaitVisible(`#username`),
		chromedp.Navigate(f.http.URL+"/ledger"),
		chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, "browser-auditor"),
		chromedp.SendKeys(`#password`, "typed in chromium"),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`#verify`),
		chromedp.Click(`#verify`),
		chromedp.WaitVisible(`div#verify-result`),
	))
	result, err := chromedp.Run(ctx, chromedp.Text(`#verify-result`))
	require.NoError(t, err)
	who, err := chromedp.Run(ctx, chromedp.Text(`header .who span`))
	require.NoError(t, err)
	assert.Equal(t, "browser-auditor (auditor)", who)
	assert.Contains(t, result, "OK")
	assert.Contains(t, result, "Started by browser-auditor")
}
