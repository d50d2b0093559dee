package extract

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-pdf/fpdf"
)

// benchDocs are, per kind, the office programs' sample and a larger generated document
// of about 100 KB of text.
func benchDocs(b *testing.B) map[string][]byte {
	const para = "The quarterly report for Köln is attached; revenue grew 12 % and costs fell."
	docs := map[string][]byte{}
	files, _ := filepath.Glob("testdata/sample*.*")
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			if res, ok := Extract(context.Background(), data, "", "", Limits{}); ok {
				docs[res.Kind+"/sample"] = data
			}
		}
	}
	var w, o, r strings.Builder
	var rows, shared []string
	for i := range 1300 {
		w.WriteString(wp(para))
		fmt.Fprintf(&o, "<text:p>%s</text:p>", para)
		fmt.Fprintf(&r, `%s \'e9\u233?\par `, para)
		rows = append(rows, fmt.Sprintf(`<row><c t="s"><v>%d</v></c><c><v>%d</v></c></row>`, i, i*7))
		shared = append(shared, para)
	}
	docs["docx/100KB"] = docxOf(b, w.String())
	docs["odt/100KB"] = odfOf(b, "text", "<office:text>"+o.String()+"</office:text>")
	docs["rtf/100KB"] = []byte(`{\rtf1\ansi\ansicpg1252 ` + r.String() + `}`)
	docs["xlsx/100KB"] = xlsxOf(b, shared, strings.Join(rows, ""))
	slides := make([]string, 130)
	for i := range slides {
		slides[i] = shape(strings.Repeat(para+" ", 10))
	}
	docs["pptx/100KB"] = pptxOf(b, slides...)
	docs["pdf/100KB"] = benchPDF(b, para, 1300)
	return docs
}

func benchPDF(b *testing.B, line string, n int) []byte {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetFont("Helvetica", "", 10)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.AddPage()
	for range n {
		pdf.Cell(0, 5, tr(line))
		pdf.Ln(5)
	}
	var buf strings.Builder
	if err := pdf.Output(&buf); err != nil {
		b.Fatal(err)
	}
	return []byte(buf.String())
}

func BenchmarkExtract(b *testing.B) {
	docs := benchDocs(b)
	for _, name := range []string{"pdf/sample", "pdf/100KB", "docx/sample", "docx/100KB", "xlsx/sample", "xlsx/100KB",
		"pptx/sample", "pptx/100KB", "odt/sample", "odt/100KB", "ods/sample", "odp/sample", "rtf/sample", "rtf/100KB"} {
		data := docs[name]
		if data == nil {
			b.Fatalf("no document %s", name)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := Extract(context.Background(), data, "", "", Limits{}); !ok {
					b.Fatal("not a document")
				}
			}
		})
	}
}
