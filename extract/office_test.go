package extract

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// extractOK runs Extract with the default limits and requires a document.
func extractOK(t *testing.T, data []byte, contentType, name string) Result {
	t.Helper()
	res, ok := Extract(context.Background(), data, contentType, name, Limits{})
	require.True(t, ok, "got ok=false; want a document")
	return res
}

func TestOfficeDocumentsSeparateWordsAsReadersSee(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data []byte
		kind string
		want string
	}{
		{"docx paragraphs, runs, tab, break; tab stops hidden", docxOf(t,
			wp("Quarterly ", "report")+wp("second")+
				`<w:p><w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t></w:r></w:p>`),
			KindDOCX, "Quarterly report\nsecond\na\tb\nc"},
		{"docx table cells and rows", docxOf(t,
			`<w:tbl><w:tr><w:tc>`+wp("r1c1")+`</w:tc><w:tc>`+wp("r1c2")+`</w:tc></w:tr><w:tr><w:tc>`+wp("r2c1")+`</w:tc></w:tr></w:tbl>`),
			KindDOCX, "r1c1\tr1c2\nr2c1"},
		{"docx deleted text, field codes, fallbacks hidden", docxOf(t,
			`<w:p><w:del><w:r><w:delText>gone</w:delText></w:r></w:del><w:r><w:instrText>HYPERLINK "x"</w:instrText></w:r><w:r><w:t>kept</w:t></w:r>`+
				`<mc:AlternateContent xmlns:mc="m"><mc:Choice><w:t>box</w:t></mc:Choice><mc:Fallback><w:t>box</w:t></mc:Fallback></mc:AlternateContent></w:p>`),
			KindDOCX, "keptbox"},
		{"docx entities and Unicode", docxOf(t, wp("Tom &amp; Jerry &lt;3 résumé 東京")),
			KindDOCX, "Tom & Jerry <3 résumé 東京"},
		{"xlsx shared, inline, formula result and number cells", xlsxOf(t, []string{"Name", "Total"},
			`<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>`+
				`<row r="2"><c t="inlineStr"><is><t>Alice</t></is></c><c><f>SUM(C1:C9)</f><v>42.5</v></c><c t="str"><f>A2</f><v>text</v></c><c t="b"><v>1</v></c></row>`),
			KindXLSX, "Name\tTotal\nAlice\t42.5\ttext"},
		{"xlsx two sheets, bad shared index skipped", xlsxOf(t, []string{"one"},
			`<row><c t="s"><v>0</v></c><c t="s"><v>7</v></c></row>`, `<row><c><v>2</v></c></row>`),
			KindXLSX, "one\n2"},
		{"pptx paragraphs and slides in order", pptxOf(t, shape("Title", "Point one"), shape("Next"), "", "", "", "", "", "", "", shape("Tenth")),
			KindPPTX, "Title\nPoint one\nNext\nTenth"},
		{"odt paragraphs, headings, s, tab, line-break; styles hidden", odfOf(t, "text",
			`<office:text><text:sequence-decls><text:sequence-decl text:name="Figure"/></text:sequence-decls>`+
				`<text:h>Head</text:h><text:p>a<text:s text:c="3"/>b<text:tab/>c<text:line-break/>d</text:p><text:p>e<text:note-citation>1</text:note-citation></text:p></office:text>`),
			KindODT, "Head\na b\tc\nd\ne"},
		{"ods cells and rows", odfOf(t, "spreadsheet",
			`<office:spreadsheet><table:table><table:table-row><table:table-cell><text:p>x</text:p></table:table-cell><table:table-cell office:value="3"><text:p>3</text:p></table:table-cell></table:table-row>`+
				`<table:table-row><table:table-cell><text:p>y</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>`),
			KindODS, "x\t3\ny"},
		{"odp pages", odfOf(t, "presentation",
			`<office:presentation><draw:page><draw:frame><draw:text-box><text:p>Slide one</text:p></draw:text-box></draw:frame></draw:page><draw:page><draw:frame><draw:text-box><text:p>two</text:p></draw:text-box></draw:frame></draw:page></office:presentation>`),
			KindODP, "Slide one\ntwo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := extractOK(t, tt.data, "application/octet-stream", "attachment.bin")
			assert.Equal(t, tt.kind, res.Kind, "got kind %q; want %q", res.Kind, tt.kind)
			assert.Equal(t, tt.want, res.Text)
			assert.Empty(t, res.Note)
		})
	}
}
