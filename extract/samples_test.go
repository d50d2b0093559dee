package extract

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSamplesFromOfficePrograms reads the documents LibreOffice and Chromium wrote from
// testdata/sample.html, sample.csv and sample.fodp (testdata/README.md).
func TestSamplesFromOfficePrograms(t *testing.T) {
	t.Parallel()
	const letter = "Dear Mr. Müller, please find the quarterly figures below. Grüße aus Köln!\n" +
		"Item\tAmount\nConsulting\t1200\nTravel\t340\nПривет, коллеги. Ελληνικά κείμενα. Café naïve résumé."
	const sheet = "Item\tAmount\tNote\nConsulting\t1200\tKöln office\nTravel\t340\tTrain to Zürich"
	const slides = "Quarterly review\nRevenue grew in Köln\nCosts fell\nNext steps"
	tests := []struct {
		file, kind, want string
	}{
		{"sample.docx", KindDOCX, "Invoice 2024-03\n" + letter},
		{"sample.odt", KindODT, "Invoice 2024-03\n" + letter},
		{"sample.rtf", KindRTF, "Invoice 2024-03\n" + letter},
		{"sample.xlsx", KindXLSX, sheet},
		{"sample.ods", KindODS, sheet},
		{"sample.pptx", KindPPTX, slides},
		{"sample.odp", KindODP, slides},
		// PDF has no cells: a table row is one line of words.
		{"sample-chromium.pdf", KindPDF, "Invoice 2024-03\n" + pdfLines(letter)},
		{"sample-libreoffice.pdf", KindPDF, pdfLines(letter)},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			require.NoError(t, err)
			res := extractOK(t, data, "", tt.file)
			assert.Equal(t, tt.kind, res.Kind)
			assert.Equal(t, tt.want, res.Text)
			assert.Empty(t, res.Note)
		})
	}
}

// pdfLines is text as a PDF shows it: cells separated by spaces.
func pdfLines(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == '\t' {
			b[i] = ' '
		}
	}
	return string(b)
}

func TestSourcesAreNoDocuments(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"sample.html", "sample.csv", "sample.fodp", "README.md"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		require.NoError(t, err)
		_, ok := Extract(t.Context(), data, "application/pdf", "x.docx", Limits{})
		assert.False(t, ok, "%s: got ok=true; want no document whatever the hints", f)
	}
}
