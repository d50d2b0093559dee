package pdftest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// render prints dir/index.html to PDF with headless chromium, with no network, sync or
// component updates, and a throw-away profile.
func (s *Server) render(ctx context.Context, dir string) ([]byte, error) {
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := filepath.Join(dir, "out.pdf")
	cmd := exec.CommandContext(ctx, s.Chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--no-pdf-header-footer", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--print-to-pdf="+out, "file://"+filepath.Join(dir, "index.html"))
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	killGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("chromium: %v: %s", err, lastLines(logs.String(), 5))
	}
	pdf, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("chromium wrote no PDF: %v: %s", err, lastLines(logs.String(), 5))
	}
	return pdf, nil
}

func saveUpload(fh *multipart.FileHeader, path string) error {
	src, err := fh.Open()
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

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
