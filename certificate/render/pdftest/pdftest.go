// Package pdftest is a local stand-in for the Gotenberg PDF service, for tests: an HTTP
// server speaking Gotenberg's POST /forms/chromium/convert/html that renders the uploaded
// index.html with Debian's chromium (--headless --print-to-pdf), and a helper that reads
// a PDF's text with pdftotext (poppler-utils).
//
// Tests that need chromium or pdftotext call Require: it skips the test with a loud SKIP
// line when they are missing, except under CI=true, where it fails instead.
package pdftest

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mailledger/mailledger/certificate/render"
)

// chromiumNames are the commands tried, in order, to find chromium.
var chromiumNames = []string{"chromium", "chromium-browser"}

// Chromium returns the path of the chromium command.
func Chromium() (string, error) {
	for _, name := range chromiumNames {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", errors.New("chromium is not installed (apt-get install chromium)")
}

// Require skips tb loudly unless chromium and pdftotext are installed; under CI=true it
// fails instead.
func Require(tb testing.TB) {
	tb.Helper()
	_, err := Chromium()
	if _, lerr := exec.LookPath("pdftotext"); lerr != nil {
		err = errors.Join(err, errors.New("pdftotext is not installed (apt-get install poppler-utils)"))
	}
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%v, and CI=true forbids skipping the PDF tests", err)
	}
	tb.Skipf("SKIP: %v", err)
}

// Start calls Require and starts the stand-in service; it stops when tb ends. Give its
// URL to render.PDFClient.
func Start(tb testing.TB) *httptest.Server {
	tb.Helper()
	Require(tb)
	chromium, err := Chromium()
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(&Server{Chromium: chromium, TempDir: tb.TempDir()})
	tb.Cleanup(srv.Close)
	return srv
}

// Server is an http.Handler answering Gotenberg's HTML route: it renders one request at a
// time (chromium is heavy), answers 404 to any other route, 400 when index.html is
// missing and 500 when chromium fails, as Gotenberg does.
type Server struct {
	// Chromium is the path of the chromium command; TempDir holds each request's files.
	Chromium string
	TempDir  string
	// Timeout bounds one rendering; zero means 90 s.
	Timeout time.Duration

	mu sync.Mutex
	n  int
}

// ServeHTTP converts the uploaded index.html to PDF.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != render.ConvertHTMLRoute {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	dir := filepath.Join(s.TempDir, fmt.Sprintf("req-%d", s.n))
	if err := saveUploads(r, dir); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	defer os.RemoveAll(dir)
	pdf, err := s.render(r.Context(), dir)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="certificate.pdf"`)
	_, _ = w.Write(pdf)
}

// saveUploads writes the multipart files of the "files" field into dir, flat, by base
// name, as Gotenberg does, and requires one named index.html.
func saveUploads(r *http.Request, dir string) error {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		return fmt.Errorf("bad multipart form: %v", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	found := false
	for _, fh := range r.MultipartForm.File["files"] {
		name := filepath.Base(fh.Filename)
		found = found || name == "index.html"
		if err := saveUpload(fh, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	if !found {
		return errors.New("form file 'index.html' is required")
	}
	return nil
}
