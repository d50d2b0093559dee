package extract

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-pdf/fpdf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repeatReader yields s again and again, n bytes in all.
type repeatReader struct {
	s   string
	n   int64
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && int64(k) < r.n {
		c := copy(p[k:min(len(p), k+int(r.n))], r.s[r.off:])
		r.off = (r.off + c) % len(r.s)
		k += c
	}
	r.n -= int64(k)
	return k, nil
}

// bombDOCX is a Word document whose document.xml inflates to n bytes of paragraphs.
func bombDOCX(t testing.TB, n int64) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("[Content_Types].xml")
	require.NoError(t, err)
	_, err = w.Write([]byte(contentTypesXML("word/document.xml", ctDocx)))
	require.NoError(t, err)
	w, err = zw.Create("word/document.xml")
	require.NoError(t, err)
	_, err = io.Copy(w, io.MultiReader(strings.NewReader(`<w:document `+nsW+`><w:body>`),
		&repeatReader{s: `<w:p><w:r><w:t>bomb text bomb text bomb text bomb text</w:t></w:r></w:p>`, n: n}))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestZipBombStopsAtMaxUnzip(t *testing.T) {
	const inflated, limit = 256 << 20, 8 << 20
	data := bombDOCX(t, inflated)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, ok := Extract(context.Background(), data, "", "", Limits{MaxUnzip: limit, MaxText: 64 << 20})
	runtime.ReadMemStats(&after)
	require.True(t, ok)
	assert.Equal(t, KindDOCX, res.Kind)
	assert.Equal(t, "decompression stopped at the 8 MiB limit", res.Note)
	assert.True(t, strings.HasPrefix(res.Text, "bomb text"), "got %.40q…; want the text read before the limit", res.Text)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(inflated/2), "got %d MiB allocated; want far less than the %d MiB the bomb inflates to", allocated>>20, inflated>>20)
}

// pdfRaw writes a PDF of the given objects (numbered from 1, the first the catalog)
// with a correct cross-reference table.
func pdfRaw(objects ...string) []byte {
	return pdfTable(objects, true, "")
}

// pdfOfContent is a one-page PDF with Helvetica as /F1 and the given content stream
// object (a stream with its dictionary).
func pdfOfContent(stream string) []byte {
	return pdfRaw(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		stream,
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	)
}

func plainStream(content string) string {
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content)
}

func flateStream(t testing.TB, content io.Reader) string {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	_, err := io.Copy(zw, content)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.String())
}

func TestPDFHugeFlateStreamStopsAtMaxUnzip(t *testing.T) {
	content := io.MultiReader(strings.NewReader("BT /F1 12 Tf 72 700 Td (Before the flood) Tj ET\n"),
		&repeatReader{s: "BT (x) Tj ET\n", n: 128 << 20})
	data := pdfOfContent(flateStream(t, content))
	res, ok := Extract(context.Background(), data, "", "", Limits{MaxUnzip: 4 << 20})
	require.True(t, ok)
	assert.Equal(t, "decompression stopped at the 4 MiB limit", res.Note)
	assert.True(t, strings.HasPrefix(res.Text, "Before the flood\nxxx"), "got %.40q…; want the text within the limit", res.Text)
}

func TestTextPastMaxTextIsCutAtACharacter(t *testing.T) {
	t.Parallel()
	body := strings.Repeat(wp("héllo wörld"), 500)
	res, ok := Extract(context.Background(), docxOf(t, body), "", "", Limits{MaxText: 1001})
	require.True(t, ok)
	assert.LessOrEqual(t, len(res.Text), 1001)
	assert.Greater(t, len(res.Text), 990)
	assert.True(t, utf8.ValidString(res.Text), "got invalid UTF-8 at the cut")
	assert.Equal(t, "text cut at 1001 bytes", res.Note)

	res, _ = Extract(context.Background(), []byte(`{\rtf1 `+strings.Repeat("word ", 300000)+`}`), "", "", Limits{})
	assert.Len(t, res.Text, 1<<20)
	assert.Equal(t, "text cut at 1 MiB", res.Note)
}

func TestTimeLimitAndCallerContext(t *testing.T) {
	t.Parallel()
	rtf := []byte(`{\rtf1 ` + strings.Repeat(`w\'e9rd `, 200000) + `}`)
	res, ok := Extract(context.Background(), rtf, "", "", Limits{Timeout: time.Nanosecond})
	require.True(t, ok)
	assert.Equal(t, "time limit 1ns reached", res.Note)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, data := range [][]byte{rtf, docxOf(t, wp("a")), pdfOfContent(plainStream("BT (a) Tj ET"))} {
		res, ok = Extract(ctx, data, "", "", Limits{})
		require.True(t, ok)
		assert.Equal(t, "stopped: context canceled", res.Note, "kind %s", res.Kind)
	}
}

func TestInputPastMaxInputIsNotRead(t *testing.T) {
	t.Parallel()
	data := pdfOfContent(plainStream("BT (a) Tj ET"))
	res, ok := Extract(context.Background(), data, "", "", Limits{MaxInput: 100})
	require.True(t, ok)
	assert.Equal(t, Result{Kind: KindPDF, Note: fmt.Sprintf("not read: %d bytes is over the 100 bytes input limit", len(data))}, res)
}

func TestEncryptedPDF(t *testing.T) {
	t.Parallel()
	encrypted := func(user string) []byte {
		pdf := fpdf.New("P", "mm", "A4", "")
		pdf.SetProtection(fpdf.CnProtectPrint, user, "owner")
		pdf.AddPage()
		pdf.SetFont("Helvetica", "", 12)
		pdf.Cell(0, 8, "Confidential words")
		var b bytes.Buffer
		require.NoError(t, pdf.Output(&b))
		return b.Bytes()
	}
	res := extractOK(t, encrypted("secret"), "", "")
	assert.Equal(t, Result{Kind: KindPDF, Note: "PDF encrypted"}, res)
	res = extractOK(t, encrypted(""), "", "")
	assert.Equal(t, Result{Kind: KindPDF, Text: "Confidential words"}, res, "no user password: readable by anyone")
}

// TestDamagedInputsGiveANote cuts every sample in half and overwrites the rest of it.
func TestDamagedInputsGiveANote(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/sample*.*")
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		if _, ok := Extract(context.Background(), data, "", f, Limits{}); !ok {
			continue
		}
		half := data[:len(data)/2]
		res, ok := Extract(context.Background(), half, "", f, Limits{})
		assert.True(t, ok, "%s cut in half: got no document", f)
		assert.NotEmpty(t, res.Note, "%s cut in half: got no note", f)
		garbage := append(bytes.Clone(half), bytes.Repeat([]byte{0xff, '(', '{', '\\', '<'}, len(half)/5)...)
		res, ok = Extract(context.Background(), garbage, "", f, Limits{})
		assert.True(t, ok, "%s with garbage: got no document", f)
		assert.True(t, utf8.ValidString(res.Text))
	}
}

func TestNotDocuments(t *testing.T) {
	t.Parallel()
	for _, data := range [][]byte{nil, []byte("hello"), []byte("PK\x03\x04junk"), zipOf(t, "a.txt", "text"), []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1old .doc")} {
		res, ok := Extract(context.Background(), data, "text/plain", "notes.txt", Limits{})
		assert.False(t, ok)
		assert.Equal(t, Result{}, res)
	}
	res := extractOK(t, []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1encrypted package"), "", "report.docx")
	assert.Equal(t, Result{Kind: KindDOCX, Note: "document encrypted"}, res)
}

// pdfObjStmBomb is a PDF 1.5 (cross-reference stream) whose page uses n fonts, each an
// object in an object stream of its own that inflates to size bytes.
func pdfObjStmBomb(t testing.TB, n int, size int64) []byte {
	content := "BT /F1 12 Tf 72 700 Td (Hello) Tj"
	fonts := "/F1 5 0 R"
	for k := range n {
		content += fmt.Sprintf(" /G%d 12 Tf (x) Tj", k)
		fonts += fmt.Sprintf(" /G%d %d 0 R", k, 1000+k)
	}
	content += " ET"
	objs := map[int]string{
		1: "<< /Type /Catalog /Pages 2 0 R >>",
		2: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		3: "<< /Type /Page /Parent 2 0 R /Resources << /Font << " + fonts + " >> >> /Contents 4 0 R >>",
		4: plainStream(content),
		5: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	bomb := flateStream(t, io.MultiReader(strings.NewReader("1000 0 "), &repeatReader{s: " ", n: size}, strings.NewReader("<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>")))
	for k := range n {
		objs[10+k] = strings.Replace(bomb, "<<", "<< /Type /ObjStm /N 1 /First 7", 1)
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	offsets := map[int]int{}
	for num := 1; num < 10+n; num++ {
		if o, ok := objs[num]; ok {
			offsets[num] = b.Len()
			fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", num, o)
		}
	}
	xrefNum, size0 := 10+n, 1000+n
	offsets[xrefNum] = b.Len()
	var rows bytes.Buffer
	for num := range size0 {
		switch off, ok := offsets[num]; {
		case ok:
			rows.Write([]byte{1, byte(off >> 24), byte(off >> 16), byte(off >> 8), byte(off), 0, 0})
		case num >= 1000:
			rows.Write([]byte{2, 0, 0, 0, byte(10 + num - 1000), 0, 0})
		default:
			rows.Write(make([]byte, 7))
		}
	}
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n%s\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n",
		xrefNum, size0, rows.Len(), rows.String(), offsets[xrefNum])
	return b.Bytes()
}

// pdfcpu decodes an object stream whole the first time one of its objects is used, and
// keeps it: those streams count against MaxUnzip too.
func TestPDFObjectStreamsCountAgainstMaxUnzip(t *testing.T) { // not parallel: it measures allocation
	small := extractOK(t, pdfObjStmBomb(t, 2, 1000), "", "")
	assert.Equal(t, Result{Kind: KindPDF, Text: "Helloxx"}, small)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, ok := Extract(context.Background(), pdfObjStmBomb(t, 40, 3<<20), "", "", Limits{MaxUnzip: 8 << 20})
	runtime.ReadMemStats(&after)
	require.True(t, ok)
	assert.Equal(t, "decompression stopped at the 8 MiB limit", res.Note)
	assert.True(t, strings.HasPrefix(res.Text, "Hello"))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(60<<20), "got %d MiB allocated; want the 40 streams of 3 MiB not all inflated", (after.TotalAlloc-before.TotalAlloc)>>20)
}
