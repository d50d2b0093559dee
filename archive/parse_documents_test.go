package archive_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
)

// withPDF is a message carrying the given PDF, its headers told apart by n.
func withPDF(n int, pdf []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString(pdf)
	var lines strings.Builder
	for len(b64) > 76 {
		lines.WriteString(b64[:76] + "\r\n")
		b64 = b64[76:]
	}
	lines.WriteString(b64 + "\r\n")
	return []byte(fmt.Sprintf("From: a@example.com\r\nTo: b%d@example.org\r\nSubject: figures %d\r\n"+
		"Message-ID: <m%d@example.com>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"+
		"--b\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n"+
		"--b\r\nContent-Type: application/pdf; name=figures.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n%s--b--\r\n",
		n, n, n, lines.String()))
}

// TestDocumentTextFromTheCacheIsTheDocumentsText: the parser reads a PDF met in several
// messages once (its cache), and every message gets the same document words as a parser
// that reads each copy.
func TestDocumentTextFromTheCacheIsTheDocumentsText(t *testing.T) {
	pdf, err := os.ReadFile(filepath.Join("..", "extract", "testdata", "sample-libreoffice.pdf"))
	require.NoError(t, err)
	cached := archive.NewParser("")
	require.NotNil(t, cached.Documents, "NewParser keeps document text")
	uncached := archive.NewParser("")
	uncached.Documents = nil
	for n := range 4 {
		raw := withPDF(n, pdf)
		a, err := cached.Parse(raw)
		require.NoError(t, err)
		b, err := uncached.Parse(raw)
		require.NoError(t, err)
		assert.Contains(t, a.Terms, "quarterly", "message %d: the PDF's words are indexed", n)
		assert.Contains(t, a.Terms, "koln", "message %d: folded, as the analyzer stores words", n)
		assert.Equal(t, b.Terms, a.Terms, "message %d", n)
		assert.Equal(t, b.ParseNote, a.ParseNote, "message %d", n)
	}
	hits, misses := cached.Documents.Stats()
	assert.Equal(t, uint64(1), misses, "the PDF was read once")
	assert.Equal(t, uint64(3), hits)
}
