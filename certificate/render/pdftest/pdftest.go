// Package pdftest runs the PDF service (package pdfservice: Gotenberg's POST
// /forms/chromium/convert/html over Debian's chromium) for tests, and reads a PDF's text
// and pages back with poppler-utils (pdftotext, pdfinfo).
//
// Tests that need chromium or pdftotext call Require: it skips the test with a loud SKIP
// line when they are missing, except under CI=true, where it fails instead.
package pdftest

import (
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"

	"github.com/mailledger/mailledger/pdfservice"
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

// Start calls Require and starts the PDF service (package pdfservice, what `mailledger
// pdfservice` runs) over the local chromium; it stops when tb ends. Give its URL to
// render.PDFClient.
func Start(tb testing.TB) *httptest.Server {
	tb.Helper()
	Require(tb)
	chromium, err := Chromium()
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := pdfservice.New(pdfservice.Config{Chromium: chromium, TempDir: tb.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(svc)
	tb.Cleanup(func() { srv.Close(); svc.Close() })
	return srv
}
