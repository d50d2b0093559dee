package extract

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCacheAnswersAsExtract: for every kind, the cached answer is Extract's, the first
// read of a content is a miss and every later one a hit, and content that is no document
// is answered as Extract answers it, without an entry.
func TestCacheAnswersAsExtract(t *testing.T) {
	pdf, err := os.ReadFile(filepath.Join("testdata", "sample-libreoffice.pdf"))
	require.NoError(t, err)
	docs := []struct {
		name, ctype string
		data        []byte
	}{
		{"a.pdf", "application/pdf", pdf},
		{"a.docx", "", docxOf(t, wp("cached", "paragraph"))},
		{"a.rtf", "", []byte(`{\rtf1\ansi hello {\b cached} rtf}`)},
		{"plain.txt", "text/plain", []byte("not a document")},
	}
	c := NewCache(1 << 20)
	ctx := context.Background()
	for _, d := range docs {
		want, wantOK := Extract(ctx, d.data, d.ctype, d.name, Limits{})
		for round := range 3 {
			got, ok := c.Extract(ctx, d.data, d.ctype, d.name, Limits{})
			assert.Equal(t, wantOK, ok, "%s round %d", d.name, round)
			assert.Equal(t, want, got, "%s round %d", d.name, round)
		}
	}
	hits, misses := c.Stats()
	assert.Equal(t, uint64(3), misses, "one read of each of the three documents")
	assert.Equal(t, uint64(6), hits, "the two later rounds of each document")
}

// TestCacheKeysByContentKindAndLimits: another content, or the same content read within
// other size limits, is read again and answered with its own result.
func TestCacheKeysByContentKindAndLimits(t *testing.T) {
	c := NewCache(1 << 20)
	ctx := context.Background()
	a := docxOf(t, wp(strings.Repeat("alpha ", 40)))
	b := docxOf(t, wp(strings.Repeat("bravo ", 40)))

	ra, _ := c.Extract(ctx, a, "", "a.docx", Limits{})
	rb, _ := c.Extract(ctx, b, "", "b.docx", Limits{})
	assert.Contains(t, ra.Text, "alpha")
	assert.Contains(t, rb.Text, "bravo")

	cut, _ := c.Extract(ctx, a, "", "a.docx", Limits{MaxText: 20})
	assert.LessOrEqual(t, len(cut.Text), 20)
	assert.Contains(t, cut.Note, "text cut at")
	again, _ := c.Extract(ctx, a, "", "a.docx", Limits{})
	assert.Equal(t, ra, again, "the full read is still answered for the default limits")

	hits, misses := c.Stats()
	assert.Equal(t, uint64(1), hits)
	assert.Equal(t, uint64(3), misses)
}

// TestCacheKeepsNoTimedRead: a read stopped by the time limit or the caller is not kept,
// so the next copy of the document is read within its own time.
func TestCacheKeepsNoTimedRead(t *testing.T) {
	c := NewCache(1 << 20)
	doc := docxOf(t, wp("patient", "text"))
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	res, ok := c.Extract(stopped, doc, "", "a.docx", Limits{})
	require.True(t, ok)
	assert.NotContains(t, res.Text, "patient")
	assert.NotEmpty(t, res.Note)

	res, ok = c.Extract(context.Background(), doc, "", "a.docx", Limits{})
	require.True(t, ok)
	assert.Contains(t, res.Text, "patient")
	assert.Empty(t, res.Note)
	hits, misses := c.Stats()
	assert.Equal(t, uint64(0), hits, "the stopped read was not kept")
	assert.Equal(t, uint64(2), misses)
}

// TestCacheStaysWithinItsBytes: many distinct documents keep the cache within its bound,
// the least recently used leaving first; one larger than a quarter of the bound is not
// kept at all.
func TestCacheStaysWithinItsBytes(t *testing.T) {
	const bound = 64 << 10
	c := NewCache(bound)
	ctx := context.Background()
	var first []byte
	for i := range 200 {
		doc := docxOf(t, wp(fmt.Sprintf("document%d %s", i, strings.Repeat("x", 500))))
		if i == 0 {
			first = doc
		}
		_, _ = c.Extract(ctx, doc, "", "", Limits{})
		c.mu.Lock()
		assert.LessOrEqual(t, c.bytes, bound)
		assert.Equal(t, c.order.Len(), len(c.entries))
		c.mu.Unlock()
	}
	_, missesBefore := c.Stats()
	_, _ = c.Extract(ctx, first, "", "", Limits{})
	_, misses := c.Stats()
	assert.Equal(t, missesBefore+1, misses, "the first document was evicted")

	big := docxOf(t, wp(strings.Repeat("large ", bound/4/6+10)))
	_, _ = c.Extract(ctx, big, "", "", Limits{})
	_, _ = c.Extract(ctx, big, "", "", Limits{})
	_, after := c.Stats()
	assert.Equal(t, misses+2, after, "a document over a quarter of the bound is read every time")
}

// TestCacheParallelCallers: goroutines reading the same and different documents at once
// get Extract's answers (run with -race).
func TestCacheParallelCallers(t *testing.T) {
	c := NewCache(1 << 20)
	ctx := context.Background()
	docs := make([][]byte, 4)
	wants := make([]Result, len(docs))
	for i := range docs {
		docs[i] = docxOf(t, wp(fmt.Sprintf("parallel%d words", i)))
		wants[i], _ = Extract(ctx, docs[i], "", "", Limits{})
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 50 {
				i := (g + n) % len(docs)
				got, ok := c.Extract(ctx, docs[i], "", "", Limits{})
				assert.True(t, ok)
				assert.Equal(t, wants[i], got)
			}
		}()
	}
	wg.Wait()
	hits, misses := c.Stats()
	assert.Equal(t, uint64(400), hits+misses)
	assert.GreaterOrEqual(t, misses, uint64(len(docs)))
}

// TestNilCacheReadsEveryTime: a nil cache is Extract.
func TestNilCacheReadsEveryTime(t *testing.T) {
	var c *Cache
	doc := docxOf(t, wp("uncached"))
	res, ok := c.Extract(context.Background(), doc, "", "", Limits{})
	require.True(t, ok)
	assert.Contains(t, res.Text, "uncached")
	hits, misses := c.Stats()
	assert.Zero(t, hits+misses)
	assert.Nil(t, NewCache(0))
}
