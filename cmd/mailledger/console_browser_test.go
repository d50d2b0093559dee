package main

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/certificate/render/pdftest"
	"github.com/mailledger/mailledger/internal/smtpsink"
)

// TestConsoleErasureInChromiumWithTheBinary drives the built binary's console in a
// headless Chromium, as two people would: the auditor logs in and creates a GDPR request
// through the form, the administrator approves it behind its confirm page, the auditor
// executes it, and the certificate's PDF link gives a PDF rendered by the binary's own
// `mailledger pdfservice`, whose text pdftotext reads back. Then a form whose CSRF token
// was changed in the page is refused and creates nothing, and the eleventh wrong
// password in a row is refused with the throttling message, the right one included.
func TestConsoleErasureInChromiumWithTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("a real browser and two processes: not in -short")
	}
	pdftest.Require(t) // chromium and pdftotext; a failure under CI=true
	env := baseEnv(t)
	env["MAILLEDGER_BOOTSTRAP_AUDITOR"] = dpoUser + ":" + dpoPassword
	env["MAILLEDGER_PURGE_INTERVAL"] = "0"
	r := runBinary(t, env, "import", archivetest.CorpusDir(t))
	require.Equal(t, 1, r.code, "one corpus file is not mail: %s", r.stderr)
	env["PDFSERVICE_URL"] = "http://" + startPDFService(t)
	s := startServe(t, env)
	s.waitFor("/readyz", http.StatusOK, 60*time.Second)

	ctx := browser(t)
	b := &consoleBrowser{t: t, ctx: ctx, base: s.base}
	b.login(dpoUser, dpoPassword)
	b.do(chromedp.Navigate(s.base+"/compliance/gdpr/new"),
		chromedp.WaitVisible(`#email_addresses`),
		chromedp.SendKeys(`#email_addresses`, erasedSubject),
		chromedp.SendKeys(`#requester_name`, "Mikel"),
		chromedp.Submit(`#email_addresses`),
		chromedp.WaitVisible(`#history`))
	requestURL := tabValue(b, chromedp.Location())
	require.Contains(t, requestURL, "/compliance/gdpr/GDPR-")
	id := requestURL[strings.LastIndex(requestURL, "/")+1:]
	b.awaitStatus(requestURL, "pending_approval")
	b.logout()

	b.login(testAdmin, testPassword)
	b.confirm(requestURL, "approve")
	b.awaitStatus(requestURL, "approved")
	b.logout()

	b.login(dpoUser, dpoPassword)
	b.confirm(requestURL, "execute")
	page := b.awaitStatus(requestURL, "completed")
	assert.Contains(t, page, "Emails deleted\n7", "the corpus holds 7 messages of the data subject")
	pdf := b.download(requestURL + "/certificate/pdf")
	require.True(t, strings.HasPrefix(string(pdf), "%PDF-"), "a PDF: %.200q", pdf)
	text := pdftest.Text(t, pdf)
	assert.Contains(t, text, id)
	assert.Contains(t, text, erasedSubject)

	// A form whose CSRF token is not the session's is refused, and nothing is created.
	b.do(chromedp.Navigate(s.base+"/compliance/gdpr/new"),
		chromedp.WaitVisible(`#email_addresses`),
		chromedp.SendKeys(`#email_addresses`, "someone.else@example.test"))
	forged := tabValue(b, chromedp.Evaluate[string](`document.querySelector('form[action="/compliance/gdpr/new"] input[name="csrf"]').value = "forged-token"`))
	require.Equal(t, "forged-token", forged)
	b.do(chromedp.Submit(`#email_addresses`), chromedp.WaitVisible(`div.error`))
	refused := tabValue(b, chromedp.Text(`div.error`))
	assert.Contains(t, refused, "CSRF token missing or wrong); nothing was changed")
	b.do(chromedp.Navigate(s.base+"/compliance/gdpr"), chromedp.WaitVisible(`main table`))
	list := tabValue(b, chromedp.Text(`main table`))
	assert.Equal(t, 1, strings.Count(list, "GDPR-"), "one request, the forged form's none:\n%s", list)
	b.logout()

	// Wrong passwords until the limiter refuses; then it refuses the right one too.
	var refusal string
	for i := 0; i < 20 && !strings.Contains(refusal, "Too many failed logins"); i++ {
		b.submitLogin(dpoUser, "wrong-password")
		b.do(chromedp.WaitVisible(`div.error`))
		refusal = tabValue(b, chromedp.Text(`div.error`))
	}
	require.Contains(t, refusal, "Too many failed logins")
	b.submitLogin(dpoUser, dpoPassword)
	b.do(chromedp.WaitVisible(`div.error`))
	assert.Contains(t, tabValue(b, chromedp.Text(`div.error`)), "Too many failed logins", "the right password, while throttled")
}

// consoleBrowser is one Chromium tab on the console of a running serve.
type consoleBrowser struct {
	t    *testing.T
	ctx  context.Context
	base string
}

func (b *consoleBrowser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	require.NoError(b.t, chromedp.Do(b.ctx, steps...))
}

// tabValue runs one action of the tab and returns its value.
func tabValue[T any](b *consoleBrowser, a chromedp.Action[T]) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	require.NoError(b.t, err)
	return v
}

func (b *consoleBrowser) submitLogin(user, password string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.base+"/login"),
		chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, user),
		chromedp.SendKeys(`#password`, password),
		chromedp.Submit(`#password`))
}

func (b *consoleBrowser) login(user, password string) {
	b.t.Helper()
	b.submitLogin(user, password)
	b.do(chromedp.WaitVisible(chromedp.CSS(`form[action="/logout"]`)))
}

func (b *consoleBrowser) logout() {
	b.t.Helper()
	b.do(chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)), chromedp.WaitVisible(`#username`))
}

// confirm opens the request's action link and presses the confirm page's button.
func (b *consoleBrowser) confirm(requestURL, action string) {
	b.t.Helper()
	button := chromedp.CSS(`main form button[type="submit"]`)
	b.do(chromedp.Navigate(requestURL),
		chromedp.Click(chromedp.CSS(`a[href$="/`+action+`"]`)),
		chromedp.WaitVisible(button),
		chromedp.Click(button),
		chromedp.WaitVisible(`#history`))
}

// awaitStatus reloads the request's page until its status is want, and returns its text.
func (b *consoleBrowser) awaitStatus(requestURL, want string) string {
	b.t.Helper()
	var text string
	require.Eventually(b.t, func() bool {
		if err := chromedp.Do(b.ctx, chromedp.Navigate(requestURL), chromedp.WaitVisible(`#history`)); err != nil {
			return false
		}
		var err error
		text, err = chromedp.Run(b.ctx, chromedp.Text(`main`))
		return err == nil && strings.Contains(text, "Status\n"+want)
	}, 60*time.Second, 200*time.Millisecond, "the request never became %s:\n%s", want, text)
	return text
}

// download fetches target with the tab's session cookie, as the link would.
func (b *consoleBrowser) download(target string) []byte {
	b.t.Helper()
	res, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{b.base}})
	require.NoError(b.t, err)
	cookies := res.Cookies
	req, err := http.NewRequest(http.MethodGet, target, nil)
	require.NoError(b.t, err)
	for _, c := range cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	require.Equal(b.t, http.StatusOK, resp.StatusCode, "%s: %.300s", target, body)
	return body
}

// browser starts a headless Chromium for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe, err := pdftest.Chromium()
	require.NoError(t, err)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("headless", true), chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}

// startPDFService starts the binary's `mailledger pdfservice` on a free address and
// returns the address once it answers its health check.
func startPDFService(t *testing.T) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(binary, "pdfservice", "--addr", addr, "--concurrent", "1")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, time.Minute, 50*time.Millisecond, "pdfservice answers its health check")
	return addr
}

// TestConsoleExportAndRestoreInChromiumWithTheBinary drives the built binary's console in
// a headless Chromium: the auditor searches the imported corpus for the data subject,
// ticks two results, creates their export in the dialog, waits on its self-reloading page
// until it is completed and downloads the ZIP, which holds the natives and load file rows
// of exactly those two messages; then restores one message to a mailbox through the
// message page and its confirm page, and the SMTP relay (a test server this test runs)
// receives the stored original.
func TestConsoleExportAndRestoreInChromiumWithTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("a real browser and the binary: not in -short")
	}
	if _, err := pdftest.Chromium(); err != nil {
		pdftest.Require(t) // skips, or fails under CI=true
	}
	sink := smtpsink.Start(t, smtpsink.Options{})
	env := baseEnv(t)
	env["MAILLEDGER_BOOTSTRAP_AUDITOR"] = dpoUser + ":" + dpoPassword
	env["MAILLEDGER_PURGE_INTERVAL"] = "0"
	env["SMARTHOST_ADDR"] = sink.Addr
	env["SMARTHOST_STARTTLS"] = "off"
	r := runBinary(t, env, "import", archivetest.CorpusDir(t))
	require.Equal(t, 1, r.code, "one corpus file is not mail: %s", r.stderr)
	s := startServe(t, env)
	s.waitFor("/readyz", http.StatusOK, 60*time.Second)

	b := &consoleBrowser{t: t, ctx: browser(t), base: s.base}
	b.login(dpoUser, dpoPassword)
	b.do(chromedp.Navigate(s.base+"/archive?go=1&from="+erasedSubject), chromedp.WaitVisible(`#results`))
	boxes := tabValue(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('input[name="id"]')).map(e => e.value)`))
	require.Len(t, boxes, 3, "the 3 messages the data subject sent, each with its box")
	picked := boxes[:2]
	b.do(chromedp.Click(`#select-`+picked[0]), chromedp.Click(`#select-`+picked[1]), chromedp.Click(`#export-selected`),
		chromedp.WaitVisible(`#bates_prefix`), chromedp.SendKeys(`#bates_prefix`, "CORP"),
		chromedp.Click(`#create`), chromedp.WaitVisible(`#download`)) // the page reloads itself until completed
	require.Equal(t, "completed", tabValue(b, chromedp.Text(`#status`)))
	href := tabValue(b, chromedp.Evaluate[string](`document.querySelector('#download').href`))
	zipped := b.download(href)
	files := unzipped(t, zipped)
	var natives []string
	for name := range files {
		if strings.HasSuffix(name, ".eml") {
			natives = append(natives, name)
		}
	}
	assert.Len(t, natives, 2, "two natives in %v", keysOf(files))
	for _, name := range natives {
		assert.Contains(t, string(files[name]), erasedSubject)
	}

	// Restore the first picked message to a mailbox.
	b.do(chromedp.Navigate(s.base+"/archive/messages/"+picked[0]), chromedp.WaitVisible(`#restore`),
		chromedp.SetValue(`#to`, "legal@example.test"), chromedp.Submit(`#to`),
		chromedp.WaitVisible(`form.stack button.primary`), chromedp.Click(`form.stack button.primary`),
		chromedp.WaitVisible(`p.notice`))
	assert.Contains(t, tabValue(b, chromedp.Text(`p.notice`)), "legal@example.test")
	raw := b.download(s.base + "/archive/messages/" + picked[0] + "/raw")
	got := sink.Messages()
	require.Len(t, got, 1)
	assert.Equal(t, []string{"legal@example.test"}, got[0].To)
	assert.Equal(t, string(raw), string(got[0].Data), "the relay received the stored original")
}

// unzipped reads every file of a ZIP.
func unzipped(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		body, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err)
		out[f.Name] = body
	}
	return out
}

func keysOf(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
