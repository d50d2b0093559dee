package extract

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-pdf/fpdf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/analyzer"
)

// dejaVu is a TrueType font with Latin, Greek and Cyrillic, for Unicode PDFs.
const dejaVu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

// pdfOf writes a PDF with fpdf: lines of text in Helvetica (windows-1252), a row of
// table cells, and with a font file, a line in that font (UTF-8, an embedded subset with
// a ToUnicode map).
func pdfOf(t testing.TB, compress bool, lines []string, cells []string, ttf, unicodeLine string) []byte {
	t.Helper()
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCompression(compress)
	pdf.AddPage()
	pdf.SetFont("Helvetica", "", 12)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	for _, s := range lines {
		pdf.Cell(0, 8, tr(s))
		pdf.Ln(8)
	}
	for _, s := range cells {
		pdf.CellFormat(40, 8, tr(s), "1", 0, "L", false, 0, "")
	}
	pdf.Ln(8)
	if ttf != "" {
		font, err := os.ReadFile(ttf)
		require.NoError(t, err)
		pdf.AddUTF8FontFromBytes("dejavu", "", font)
		pdf.SetFont("dejavu", "", 12)
		pdf.Cell(0, 8, unicodeLine)
	}
	pdf.AddPage()
	pdf.SetFont("Helvetica", "", 12)
	pdf.Cell(0, 8, "Second page")
	var buf bytes.Buffer
	require.NoError(t, pdf.Output(&buf))
	return buf.Bytes()
}

func TestPDFGeneratedByFpdf(t *testing.T) {
	t.Parallel()
	lines := []string{"Quarterly report for Alice", "Café naïve – 5 €"}
	cells := []string{"Name", "Total", "42"}
	for _, compress := range []bool{false, true} {
		data := pdfOf(t, compress, lines, cells, "", "")
		res := extractOK(t, data, "", "")
		assert.Equal(t, KindPDF, res.Kind)
		assert.Equal(t, "Quarterly report for Alice\nCafé naïve – 5 €\nName Total 42\nSecond page", res.Text, "compress=%v", compress)
		assert.Empty(t, res.Note)
	}
}

func TestPDFUnicodeFont(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(dejaVu); err != nil {
		t.Skipf("SKIP: no TrueType font at %s, the Unicode PDF case is not tested (apt-get install fonts-dejavu-core)", dejaVu)
	}
	const line = "Grüße aus Köln, Привет мир, Ελληνικά"
	res := extractOK(t, pdfOf(t, true, []string{"Intro"}, nil, dejaVu, line), "", "")
	assert.Equal(t, "Intro\n"+line+"\nSecond page", res.Text)
	assert.Empty(t, res.Note)
}

// TestPDFMatchesPdftotext compares the words of each test PDF with poppler's pdftotext.
func TestPDFMatchesPdftotext(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("pdftotext not installed; CI must have poppler-utils")
		}
		t.Skip("SKIP: pdftotext not installed (apt-get install poppler-utils); the PDF oracle is not run")
	}
	docs := map[string][]byte{
		"fpdf":            pdfOf(t, false, []string{"Hello World", "naïve café"}, []string{"a", "b"}, "", ""),
		"fpdf compressed": pdfOf(t, true, []string{"Compressed text here"}, nil, "", ""),
	}
	if _, err := os.Stat(dejaVu); err == nil {
		docs["fpdf dejavu"] = pdfOf(t, true, nil, nil, dejaVu, "Grüße Привет Ελληνικά")
	}
	files, _ := filepath.Glob("testdata/*.pdf")
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		docs[filepath.Base(f)] = b
	}
	for name, data := range docs {
		t.Run(name, func(t *testing.T) {
			want := pdftotext(t, bin, data)
			res := extractOK(t, data, "", "")
			assert.Equal(t, wordsOf(want), wordsOf(res.Text), "got the words of our text; want pdftotext's")
		})
	}
}

func pdftotext(t *testing.T, bin string, data []byte) string {
	t.Helper()
	cmd := exec.Command(bin, "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	require.NoError(t, err)
	return string(out)
}

// wordsOf returns the index words of a text, in order: what search sees of it.
func wordsOf(s string) []string {
	var w []string
	analyzer.Words(s, func(x string) { w = append(w, x) })
	return w
}
