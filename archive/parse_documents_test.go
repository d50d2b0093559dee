package archive_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
)

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
		raw := archivetest.WithAttachment("a@example.com", fmt.Sprintf("b%d@example.org", n), "figures", "see attached",
			"figures.pdf", pdf, time.Date(2026, 3, 1, 10, n, 0, 0, time.UTC))
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
