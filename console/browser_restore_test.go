package console_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
)

// TestBrowserRestore restores a message to a mailbox through the pages in a real,
// headless Chromium: the message page's form (filled with the user's own address), the
// confirm page, its button; the test SMTP server receives the original bytes.
func TestBrowserRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("a real browser: not in -short")
	}
	exe := chromiumPath(t)
	f := newFixture(t, database.SQLite)
	sink := f.withSink()
	raw := mail("boss@example.test", userAddress, "restore in chromium", "the original bytes")
	id := f.archiveMail(tenant, raw)[0]
	ctx := headless(t, exe, 1280, 60*time.Second)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/archive/messages/%d", f.http.URL, id)),
		chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, plainUser),
		chromedp.SendKeys(`#password`, password),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`#restore`),
	))
	prefilled, err := chromedp.Run(ctx, chromedp.Value(`#to`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Submit(`#to`),
		chromedp.WaitVisible(`form.stack button.primary`),
	))
	confirm, err := chromedp.Run(ctx, chromedp.Text(`main`))
	require.NoError(t, err)
	require.Empty(t, sink.Messages(), "the confirm page sends nothing")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`form.stack button.primary`),
		chromedp.WaitVisible(`p.notice`),
	))
	notice, err := chromedp.Run(ctx, chromedp.Text(`p.notice`))
	require.NoError(t, err)

	assert.Equal(t, userAddress, prefilled)
	assert.Contains(t, confirm, "restore in chromium")
	assert.Contains(t, notice, userAddress)
	assert.Contains(t, notice, sink.Addr)
	got := sink.Messages()
	require.Len(t, got, 1)
	assert.Equal(t, raw, string(got[0].Data))
	assert.Equal(t, []string{userAddress}, got[0].To)
}
