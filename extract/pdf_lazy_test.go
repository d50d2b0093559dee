package extract

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jhillyerd/enmime/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readBoth reads data with the lazy reader and with pdfcpu's, each in a run of its own.
func readBoth(t *testing.T, data []byte) (lazy, eager Result, lazyOK bool) {
	t.Helper()
	lim := Limits{}
	lim.setDefaults()
	read := func(f func(*run) error) Result {
		r := &run{lim: lim, out: newTextOut(lim.MaxText)}
		err := r.protect(func() error { return f(r) })
		return Result{Kind: KindPDF, Text: r.out.String(), Note: r.note(context.Background(), err)}
	}
	lazy = read(func(r *run) error {
		err, ok := readPDFLazy(context.Background(), r, data)
		lazyOK = ok
		return err
	})
	eager = read(func(r *run) error { return readPDFEager(context.Background(), r, data) })
	return lazy, eager, lazyOK
}

// lazyPDFSources are well-formed PDFs of several writers: Chromium's and LibreOffice's
// samples (cross-reference streams, object streams), fpdf's (a table, compressed and not)
// and hand-made ones (a table, plain and deflated content).
func lazyPDFSources(t *testing.T) map[string][]byte {
	docs := map[string][]byte{}
	files, _ := filepath.Glob("testdata/*.pdf")
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		docs[filepath.Base(f)] = data
	}
	require.Len(t, docs, 2, "the two samples of testdata")
	docs["fpdf"] = pdfOf(t, false, []string{"Invoice 2024", "Grüße aus Köln"}, []string{"a", "b"}, "", "")
	docs["fpdf, compressed"] = pdfOf(t, true, []string{"Invoice 2024", "Grüße aus Köln"}, []string{"a", "b"}, "", "")
	docs["plain content"] = pdfOfContent(plainStream("BT /F1 12 Tf 72 700 Td [(A) -300 (B)] TJ T* (C) ' ET"))
	docs["deflated content"] = pdfOfContent(flateStream(t, strings.NewReader("BT /F1 12 Tf (Hello world) Tj ET")))
	return docs
}

// TestPDFLazyMatchesPdfcpu: the lazy reader reads every well-formed source itself and
// finds exactly the text and notes of pdfcpu's reader.
func TestPDFLazyMatchesPdfcpu(t *testing.T) {
	t.Parallel()
	for name, data := range lazyPDFSources(t) {
		t.Run(name, func(t *testing.T) {
			lazy, eager, ok := readBoth(t, data)
			require.True(t, ok, "the lazy reader left %s to pdfcpu", name)
			require.NotEmpty(t, eager.Text)
			assert.Equal(t, eager, lazy)
		})
	}
}

// TestPDFLazyCorpus reads every PDF attached to a corpus message both ways: where pdfcpu
// reads one whole, the text is the same; where the lazy reader leaves one to pdfcpu,
// readPDF's answer is pdfcpu's.
func TestPDFLazyCorpus(t *testing.T) {
	t.Parallel()
	pdfs := corpusPDFs(t)
	require.GreaterOrEqual(t, len(pdfs), 5, "the corpus's PDF attachments")
	lazily := 0
	for name, data := range pdfs {
		lazy, eager, ok := readBoth(t, data)
		if !ok {
			t.Logf("%s: left to pdfcpu", name)
			got, _ := Extract(context.Background(), data, "application/pdf", "", Limits{})
			assert.Equal(t, eager.Text, got.Text, name)
			continue
		}
		lazily++
		if eager.Note == "" {
			assert.Equal(t, eager, lazy, name)
		} else { // pdfcpu stopped at damage the pages do not use
			t.Logf("%s: pdfcpu: %q; lazy: %q", name, eager.Note, lazy.Note)
			assert.GreaterOrEqual(t, len(lazy.Text), len(eager.Text), name)
		}
	}
	t.Logf("%d of %d PDF attachments read by the lazy reader", lazily, len(pdfs))
	assert.GreaterOrEqual(t, lazily, len(pdfs)/2, "PDFs read by the lazy reader")
}

// corpusPDFs are the PDF attachments of the corpus's messages, by file and part.
func corpusPDFs(t *testing.T) map[string][]byte {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "shared", "corpus")
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintf(os.Stderr, "SKIP: %s: corpus not found at %s\n", t.Name(), dir)
		t.Skipf("SKIP: corpus not found at %s", dir)
	}
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		env, err := enmime.ReadEnvelope(bytes.NewReader(raw))
		if err != nil {
			return nil // not a message enmime reads: no PDFs from it
		}
		parts := append(append(append([]*enmime.Part{}, env.Attachments...), env.Inlines...), env.OtherParts...)
		for i, part := range parts {
			if bytes.HasPrefix(bytes.TrimLeft(part.Content, "\r\n\t "), []byte("%PDF-")) {
				rel, _ := filepath.Rel(dir, p)
				out[fmt.Sprintf("%s #%d", rel, i)] = part.Content
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestPDFLazyLeavesDamageToPdfcpu: a table whose offsets are all wrong, a file without
// startxref and an encrypted-looking trailer are left to pdfcpu, and readPDF answers as
// pdfcpu does.
func TestPDFLazyLeavesDamageToPdfcpu(t *testing.T) {
	t.Parallel()
	good := pdfOfContent(plainStream("BT /F1 12 Tf (Hello world) Tj ET"))
	shifted := bytes.Replace(good, []byte("%PDF-1.4\n"), []byte("%PDF-1.4\n%%%%%%%%%%%%%%%%%%%%\n"), 1)
	noStartxref := good[:bytes.LastIndex(good, []byte("startxref"))]
	encrypted := bytes.Replace(good, []byte("/Root 1 0 R"), []byte("/Root 1 0 R /Encrypt << /Filter /Standard /V 1 /R 2 /O <00> /U <00> /P -4 >>"), 1)
	for name, data := range map[string][]byte{"offsets shifted": shifted, "no startxref": noStartxref, "encrypted": encrypted} {
		t.Run(name, func(t *testing.T) {
			_, eager, ok := readBoth(t, data)
			assert.False(t, ok, "the lazy reader read %s itself", name)
			got, isDoc := Extract(context.Background(), data, "application/pdf", "", Limits{})
			require.True(t, isDoc)
			assert.Equal(t, eager, got)
		})
	}
}

// TestPDFLazyReadsOnlyThePages: an object the pages never reach is never parsed, so a
// damaged one there does not stop the text (pdfcpu's reader parses it first).
func TestPDFLazyReadsOnlyThePages(t *testing.T) {
	t.Parallel()
	data := pdfRaw(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		plainStream("BT /F1 12 Tf (Hello world) Tj ET"),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		"<< /Unused [1 2 3",
	)
	lazy, _, ok := readBoth(t, data)
	require.True(t, ok)
	assert.Equal(t, Result{Kind: KindPDF, Text: "Hello world"}, lazy)
}

// pdfTable writes objects 1… with a cross-reference table; endobj false leaves every
// object's endobj out, trailer is added to the trailer's dictionary (XREF in it becomes
// the table's offset).
func pdfTable(objects []string, endobj bool, trailer string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\n", i+1, o)
		if endobj {
			b.WriteString("endobj\n")
		}
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	if trailer != "" {
		trailer = " " + strings.ReplaceAll(trailer, "XREF", fmt.Sprint(xref))
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, trailer, xref)
	return b.Bytes()
}

// TestPDFLazyHostileStructures: structures made to loop, to claim huge tables or to make
// every object cost a scan of the file are read whole, well within the time limit. The
// last one took pdfcpu's reader over 3 minutes (it stops at the time limit, with no text).
func TestPDFLazyHostileStructures(t *testing.T) {
	t.Parallel()
	hello := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		"<< /Length 6 0 R >>\nstream\nBT /F1 12 Tf (Hello world) Tj ET\nendstream",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		"6 0 R", // a Length that refers to itself
	}
	const pages = 20000
	many := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", plainStream("BT /F1 12 Tf (x) Tj ET"),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
	var kids strings.Builder
	for i := range pages {
		fmt.Fprintf(&kids, "%d 0 R ", len(many)+1)
		many = append(many, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 4 0 R >> >> /Contents 3 0 R >>")
		_ = i
	}
	many[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids.String(), pages)
	// A cross-reference stream that claims a billion rows and holds six.
	var rows bytes.Buffer
	body := pdfTable(hello, true, "")
	xrefAt := bytes.Index(body, []byte("xref\n"))
	for num := range 7 {
		off := 0
		if num > 0 {
			off = bytes.Index(body, fmt.Appendf(nil, "\n%d 0 obj", num)) + 1
		}
		rows.Write([]byte{1, byte(off >> 8), byte(off)})
	}
	claims := append(append([]byte{}, body[:xrefAt]...), fmt.Appendf(nil,
		"7 0 obj\n<< /Type /XRef /Size 8 /W [1 2 0] /Index [0 1000000000] /Root 1 0 R /Length %d >>\nstream\n%s\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n",
		rows.Len(), rows.String(), xrefAt)...)

	for _, tc := range []struct {
		name string
		data []byte
		text string
	}{
		{"a Prev that is the section itself", pdfTable(hello, true, "/Prev XREF"), "Hello world"},
		{"a Length that refers to itself", pdfTable(hello, true, ""), "Hello world"},
		{"a cross-reference stream claiming a billion rows", claims, "Hello world"},
		{"20,000 pages, no object ends with endobj", pdfTable(many, false, ""), strings.TrimSpace(strings.Repeat("x\n", pages))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, ok := Extract(context.Background(), tc.data, "application/pdf", "", Limits{})
			require.True(t, ok)
			assert.Empty(t, res.Note)
			assert.Equal(t, len(tc.text), len(res.Text))
			assert.True(t, tc.text == res.Text, "the text differs") // not printed: 40,000 bytes
		})
	}
}
