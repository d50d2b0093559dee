// Package pdfservice is a small PDF service with Gotenberg's Chromium HTML route (POST
// /forms/chromium/convert/html, files[]=index.html and its assets), rendering with a local
// headless Chromium through chromedp: `mailledger pdfservice` gives an operator on one
// machine the PDF certificates by installing their distribution's chromium, without
// Docker. PDFSERVICE_URL points at it as it would at Gotenberg.
//
// Chromium starts once and renders each request in a tab of its own, at most
// Config.Concurrent at a time. The pages it renders are what the uploader sent: they run
// no JavaScript and reach no network (every request but file:// goes to a proxy that does
// not exist), so a document cannot make the service fetch anything.
package pdfservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mailledger/mailledger/certificate/render"
)

// Defaults of Config.
const (
	DefaultConcurrent = 2
	DefaultTimeout    = time.Minute
	DefaultMaxUpload  = 32 << 20
)

// HealthRoute answers 200 while Chromium runs, as Gotenberg's does.
const HealthRoute = "/health"

// Config configures a Service. Chromium is required; the rest defaults.
type Config struct {
	Chromium   string        // path of the chromium command
	Concurrent int           // renderings at once (DefaultConcurrent)
	Timeout    time.Duration // of one rendering (DefaultTimeout)
	MaxUpload  int64         // bytes of one request's files (DefaultMaxUpload)
	TempDir    string        // where each request's files go; os.TempDir() when empty
	Logger     *slog.Logger  // slog.Default() when nil
}

func (c *Config) setDefaults() {
	if c.Concurrent <= 0 {
		c.Concurrent = DefaultConcurrent
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxUpload <= 0 {
		c.MaxUpload = DefaultMaxUpload
	}
	if c.TempDir == "" {
		c.TempDir = os.TempDir()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Service is the running PDF service: an http.Handler over one Chromium.
type Service struct {
	cfg     Config
	browser context.Context
	stop    func()
	slots   chan struct{}
	work    string // the service's own temporary folder
}

// New starts Chromium and returns the service; Close stops it.
func New(cfg Config) (*Service, error) {
	if cfg.Chromium == "" {
		return nil, errors.New("pdfservice: the chromium command is required")
	}
	cfg.setDefaults()
	work, err := os.MkdirTemp(cfg.TempDir, "mailledger-pdf-")
	if err != nil {
		return nil, fmt.Errorf("pdfservice: %w", err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), browserOptions(cfg.Chromium, work)...)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	if err := chromedp.Do(browser); err != nil { // starts Chromium now, not at the first request
		cancelBrowser()
		cancelAlloc()
		os.RemoveAll(work)
		return nil, fmt.Errorf("pdfservice: start chromium: %w", err)
	}
	s := &Service{cfg: cfg, browser: browser, slots: make(chan struct{}, cfg.Concurrent), work: work}
	s.stop = func() { cancelBrowser(); cancelAlloc(); os.RemoveAll(work) }
	return s, nil
}

// browserOptions run Chromium headless, without JavaScript, network, sync or updates,
// with a profile of its own under work.
func browserOptions(chromium, work string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox,
		chromedp.UserDataDir(filepath.Join(work, "profile")),
		chromedp.Flag("blink-settings", "scriptEnabled=false"),
		chromedp.Flag("proxy-server", "socks5://127.0.0.1:9"), // nothing listens: no page reaches the network
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),     // not even loopback
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
}

// Close stops Chromium and removes the service's files.
func (s *Service) Close() { s.stop() }

// ServeHTTP answers the HTML route and the health check; anything else is 404.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == HealthRoute && r.Method == http.MethodGet:
		s.health(w, r)
	case r.URL.Path == render.ConvertHTMLRoute && r.Method == http.MethodPost:
		s.convert(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Service) health(w http.ResponseWriter, _ *http.Request) {
	if s.browser.Err() != nil { // Chromium ended
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"down"}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"up"}`))
}

// convert renders the uploaded index.html: 400 without it or over MaxUpload, 503 when
// every slot stays busy past the timeout, 500 when Chromium fails.
func (s *Service) convert(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxUpload)
	dir, err := os.MkdirTemp(s.work, "req-")
	if err != nil {
		http.Error(w, "no room for the upload", http.StatusInternalServerError)
		return
	}
	defer os.RemoveAll(dir)
	if err := saveUploads(r, dir); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
	defer cancel()
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	pdf, err := s.render(ctx, filepath.Join(dir, "index.html"))
	if err != nil {
		s.cfg.Logger.Warn("pdf rendering failed", "error", err.Error())
		http.Error(w, "rendering failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="document.pdf"`)
	_, _ = w.Write(pdf)
}

// render prints the page at index to PDF in a tab of its own, with its backgrounds and
// the page size its CSS asks for.
func (s *Service) render(ctx context.Context, index string) ([]byte, error) {
	tab, closeTab := chromedp.NewContext(s.browser)
	defer closeTab()
	stop := context.AfterFunc(ctx, closeTab) // the request's deadline ends the tab
	defer stop()
	if err := chromedp.Do(tab, chromedp.Navigate("file://"+index)); err != nil {
		return nil, errors.Join(err, ctx.Err())
	}
	pdf, err := chromedp.Run(tab, chromedp.PrintToPDF(chromedp.PDFPrintBackground(), chromedp.PDFPreferCSSPageSize()))
	if err != nil {
		return nil, errors.Join(err, ctx.Err())
	}
	return pdf, ctx.Err()
}
