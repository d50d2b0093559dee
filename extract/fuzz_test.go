package extract

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzExtract feeds Extract the samples and generated documents, mutated: it must stay
// within its limits, return valid UTF-8, and no reader may panic (a recovered panic is a
// failure here, though Extract turns it into a note).
func FuzzExtract(f *testing.F) {
	files, _ := filepath.Glob("testdata/sample*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "", filepath.Base(p))
		}
	}
	f.Add(docxOf(f, wp("a", "b")+`<w:tbl><w:tr><w:tc>`+wp("c")+`</w:tc></w:tr></w:tbl>`), "", "")
	f.Add(xlsxOf(f, []string{"s"}, `<row><c t="s"><v>0</v></c><c><v>1</v></c></row>`), "", "")
	f.Add(pptxOf(f, shape("x", "y")), "", "")
	f.Add(odfOf(f, "text", `<office:text><text:p>a<text:s/>b</text:p></office:text>`), "", "")
	f.Add([]byte(`{\rtf1\ansi\ansicpg1251{\fonttbl{\f0\fcharset204 X;}}\f0 \'cf\u1088?{\*\x y}\par}`), "", "")
	f.Add(pdfOfContent(plainStream("BT /F1 12 Tf 72 700 Td [(A) -300 (B)] TJ T* (C) ' ET")), "", "")
	f.Add(pdfOf(f, true, []string{"fpdf"}, []string{"c1", "c2"}, "", ""), "", "")
	lim := Limits{MaxText: 4096, MaxUnzip: 1 << 20, Timeout: 2 * time.Second}
	f.Fuzz(func(t *testing.T, data []byte, contentType, name string) {
		start := time.Now()
		res, ok := Extract(context.Background(), data, contentType, name, lim)
		if took := time.Since(start); took > 3*lim.Timeout {
			t.Fatalf("took %v; want the %v time limit kept", took, lim.Timeout)
		}
		if !ok {
			if res != (Result{}) {
				t.Fatalf("got %+v with ok=false; want an empty result", res)
			}
			return
		}
		if !utf8.ValidString(res.Text) || len(res.Text) > lim.MaxText {
			t.Fatalf("got %d bytes of text (valid UTF-8: %v); want at most %d, valid", len(res.Text), utf8.ValidString(res.Text), lim.MaxText)
		}
		if strings.Contains(res.Note, errPanic.Error()) {
			t.Fatalf("a reader panicked: %s", res.Note)
		}
	})
}
