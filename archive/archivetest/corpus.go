// Package archivetest holds helpers for tests that need archived mail: the shared corpus
// (../shared/corpus, skipped loudly when absent) and messages generated in code.
package archivetest

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// CorpusDir finds ../shared/corpus from the project root, or skips the test loudly.
func CorpusDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dir := filepath.Join(root, "..", "shared", "corpus")
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintf(os.Stderr, "SKIP: %s: corpus not found at %s\n", t.Name(), dir)
		t.Skipf("SKIP: corpus not found at %s", dir)
	}
	return dir
}

// CorpusFiles lists every message file of the corpus (README.md excluded), sorted.
func CorpusFiles(t testing.TB) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(CorpusDir(t), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.EqualFold(d.Name(), "README.md") {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Message builds a small well-formed message.
func Message(from string, to []string, cc []string, subject, body string, sent time.Time) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\n", from, strings.Join(to, ", "))
	if len(cc) > 0 {
		fmt.Fprintf(&b, "Cc: %s\r\n", strings.Join(cc, ", "))
	}
	fmt.Fprintf(&b, "Subject: %s\r\nDate: %s\r\nMessage-ID: <%d.%s>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		subject, sent.UTC().Format(time.RFC1123Z), sent.UnixNano(), strings.ReplaceAll(from, "@", ".gen@"), body)
	return []byte(b.String())
}

// WithAttachment builds a multipart message with one base64 attachment.
func WithAttachment(from, to, subject, body, name string, content []byte, sent time.Time) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <att.%d@gen>\r\nMIME-Version: 1.0\r\n", from, to, subject, sent.UTC().Format(time.RFC1123Z), sent.UnixNano())
	b.WriteString("Content-Type: multipart/mixed; boundary=\"BOUNDARY\"\r\n\r\n--BOUNDARY\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n")
	b.WriteString(body + "\r\n--BOUNDARY\r\n")
	fmt.Fprintf(&b, "Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"%s\"\r\nContent-Transfer-Encoding: base64\r\n\r\n%s\r\n--BOUNDARY--\r\n", name, encode64(content))
	return []byte(b.String())
}

func encode64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
