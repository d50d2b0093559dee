package extract

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// zipOf builds a zip of name, content pairs, in order; the first entry is stored
// uncompressed when it is an OpenDocument mimetype, as the standard requires.
func zipOf(t testing.TB, pairs ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(pairs); i += 2 {
		method := zip.Deflate
		if pairs[i] == "mimetype" {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: pairs[i], Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(pairs[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const xmlHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

// contentTypesXML lists the parts of an OOXML package with their content types.
func contentTypesXML(overrides ...string) string {
	var b strings.Builder
	b.WriteString(xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
		`<Default Extension="xml" ContentType="application/xml"/>`)
	for i := 0; i+1 < len(overrides); i += 2 {
		fmt.Fprintf(&b, `<Override PartName="/%s" ContentType="%s"/>`, overrides[i], overrides[i+1])
	}
	b.WriteString(`</Types>`)
	return b.String()
}

const (
	ctDocx   = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
	ctHeader = "application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"
	ctXlsx   = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
	ctSheet  = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
	ctShared = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
	ctPptx   = "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
	ctSlide  = "application/vnd.openxmlformats-officedocument.presentationml.slide+xml"
	ctNotes  = "application/vnd.openxmlformats-officedocument.presentationml.notesSlide+xml"
)

const nsW = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`

// docxOf builds a Word document whose body holds the given WordprocessingML.
func docxOf(t testing.TB, body string) []byte {
	return zipOf(t,
		"[Content_Types].xml", contentTypesXML("word/document.xml", ctDocx),
		"_rels/.rels", xmlHead+`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
		"word/document.xml", xmlHead+`<w:document `+nsW+`><w:body>`+body+`<w:sectPr/></w:body></w:document>`,
	)
}

// wp is a Word paragraph of one run per text.
func wp(texts ...string) string {
	var b strings.Builder
	b.WriteString(`<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr>`)
	for _, s := range texts {
		fmt.Fprintf(&b, `<w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">%s</w:t></w:r>`, s)
	}
	b.WriteString(`</w:p>`)
	return b.String()
}

const nsS = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"`

// xlsxOf builds a workbook of the shared strings and worksheets' sheetData given.
func xlsxOf(t testing.TB, shared []string, sheets ...string) []byte {
	var ss strings.Builder
	ss.WriteString(xmlHead + `<sst ` + nsS + `>`)
	for _, s := range shared {
		fmt.Fprintf(&ss, `<si><t>%s</t></si>`, s)
	}
	ss.WriteString(`</sst>`)
	overrides := []string{"xl/workbook.xml", ctXlsx, "xl/sharedStrings.xml", ctShared}
	parts := []string{"xl/workbook.xml", xmlHead + `<workbook ` + nsS + `><sheets/></workbook>`, "xl/sharedStrings.xml", ss.String()}
	for i, data := range sheets {
		name := fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1)
		overrides = append(overrides, name, ctSheet)
		parts = append(parts, name, xmlHead+`<worksheet `+nsS+`><sheetData>`+data+`</sheetData></worksheet>`)
	}
	return zipOf(t, append([]string{"[Content_Types].xml", contentTypesXML(overrides...)}, parts...)...)
}

const nsA = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`

// pptxOf builds a presentation with one slide per body of shapes (p:sp elements).
func pptxOf(t testing.TB, slides ...string) []byte {
	overrides := []string{"ppt/presentation.xml", ctPptx}
	parts := []string{"ppt/presentation.xml", xmlHead + `<p:presentation ` + nsA + `/>`}
	for i, s := range slides {
		name := fmt.Sprintf("ppt/slides/slide%d.xml", i+1)
		overrides = append(overrides, name, ctSlide)
		parts = append(parts, name, xmlHead+`<p:sld `+nsA+`><p:cSld><p:spTree>`+s+`</p:spTree></p:cSld></p:sld>`)
	}
	return zipOf(t, append([]string{"[Content_Types].xml", contentTypesXML(overrides...)}, parts...)...)
}

// shape is a DrawingML text shape of one paragraph per text.
func shape(paras ...string) string {
	var b strings.Builder
	b.WriteString(`<p:sp><p:txBody><a:bodyPr/><a:lstStyle/>`)
	for _, s := range paras {
		fmt.Fprintf(&b, `<a:p><a:pPr><a:tabLst><a:tab pos="1"/></a:tabLst></a:pPr><a:r><a:rPr lang="en-US"/><a:t>%s</a:t></a:r></a:p>`, s)
	}
	b.WriteString(`</p:txBody></p:sp>`)
	return b.String()
}

const nsODF = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"`

// odfOf builds an OpenDocument of the mimetype's kind ("text", "spreadsheet",
// "presentation") whose office:body holds body.
func odfOf(t testing.TB, kind, body string) []byte {
	return zipOf(t,
		"mimetype", "application/vnd.oasis.opendocument."+kind,
		"META-INF/manifest.xml", xmlHead+`<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>`,
		"content.xml", xmlHead+`<office:document-content `+nsODF+`><office:automatic-styles><style:style xmlns:style="s">STYLE</style:style></office:automatic-styles><office:body>`+body+`</office:body></office:document-content>`,
	)
}
