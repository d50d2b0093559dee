package pdftest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Text returns the text of pdf, extracted with pdftotext (call Require first).
func Text(tb testing.TB, pdf []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		tb.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-layout", path, "-").Output()
	if err != nil {
		tb.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// Pages returns the number of pages of pdf, read with pdfinfo (poppler-utils).
func Pages(tb testing.TB, pdf []byte) int {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		tb.Fatal(err)
	}
	out, err := exec.Command("pdfinfo", path).Output()
	if err != nil {
		tb.Fatalf("pdfinfo: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pages:"); ok {
			var n int
			fmt.Sscan(strings.TrimSpace(rest), &n)
			return n
		}
	}
	tb.Fatalf("pdfinfo printed no page count: %s", out)
	return 0
}
