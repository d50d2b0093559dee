package extract

import (
	"cmp"
	"context"
	"encoding/xml"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ooxmlMainParts are the usual names of the main parts, used when [Content_Types].xml
// does not name them.
var ooxmlMainParts = map[string]string{
	KindDOCX: "word/document.xml",
	KindXLSX: "xl/workbook.xml",
	KindPPTX: "ppt/presentation.xml",
}

// contentTypes returns the parts of an Office Open XML package by content type, from its
// [Content_Types].xml (Override entries, part names without the leading slash).
func (d *zipDoc) contentTypes(ctx context.Context, r *run) (map[string][]string, error) {
	rc, err := d.open(ctx, r, "[Content_Types].xml")
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	h := &typesHandler{parts: map[string][]string{}}
	return h.parts, walkXML(ctx, r, rc, h)
}

type typesHandler struct{ parts map[string][]string }

func (h *typesHandler) start(e xml.StartElement) (bool, error) {
	if e.Name.Local == "Override" {
		t := strings.ToLower(attr(e, "ContentType"))
		h.parts[t] = append(h.parts[t], strings.TrimPrefix(attr(e, "PartName"), "/"))
	}
	return false, nil
}
func (h *typesHandler) end(string) error   { return nil }
func (h *typesHandler) chars([]byte) error { return nil }

// partsOf returns the part names whose content type ends with one of the suffixes, in
// natural order (slide2 before slide10), or the fallback names present in the zip.
func (d *zipDoc) partsOf(types map[string][]string, fallback string, suffixes ...string) []string {
	var names []string
	for t, ps := range types {
		for _, s := range suffixes {
			if strings.HasSuffix(t, s) {
				names = append(names, ps...)
			}
		}
	}
	if len(names) == 0 {
		for _, n := range d.names {
			if strings.HasPrefix(n, fallback) && strings.HasSuffix(n, ".xml") && !strings.Contains(n[len(fallback):], "/") {
				names = append(names, n)
			}
		}
	}
	slices.SortFunc(names, naturalCompare)
	return slices.Compact(names)
}

// naturalCompare orders names with their digit runs compared as numbers.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na, _ := strconv.Atoi(a[:min(da, 9)])
			nb, _ := strconv.Atoi(b[:min(db, 9)])
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digitPrefix(s string) int {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// openOOXML opens a package and reads its content types; an unreadable [Content_Types].xml
// leaves the usual part names.
func openOOXML(ctx context.Context, r *run, data []byte) (*zipDoc, map[string][]string, error) {
	d, err := openZip(data)
	if err != nil {
		return nil, nil, err
	}
	types, err := d.contentTypes(ctx, r)
	if err != nil && !isDamage(err) {
		return nil, nil, err
	}
	return d, types, err
}

// readDOCX reads a Word document: the body, then headers, footers, footnotes, endnotes
// and comments.
func readDOCX(ctx context.Context, r *run, data []byte) error {
	d, types, damage := openOOXML(ctx, r, data)
	if d == nil {
		return damage
	}
	parts := d.partsOf(types, "word/document", ".document.main+xml", ".template.main+xml", ".macroenabled.main+xml", ".macroenabledtemplate.main+xml")
	for _, kind := range []string{"header", "footer", "footnotes", "endnotes", "comments"} {
		parts = append(parts, d.partsOf(types, "word/"+kind, "wordprocessingml."+kind+"+xml")...)
	}
	err := d.readParts(ctx, r, parts, func(rd io.Reader) error { return walkXML(ctx, r, rd, &wordHandler{out: r.out}) })
	return cmp.Or(err, damage)
}

// wordHandler writes the visible text of WordprocessingML: w:t runs; w:tab, w:br, w:cr
// as white space; a line after each paragraph (a space inside a table cell) and row, a
// tab after each cell. Properties, deleted text
// (w:delText), field codes (w:instrText) and the fallback copies of drawings are hidden.
type wordHandler struct {
	out    *textOut
	inText bool
	inCell int // depth of table cells: a paragraph in a cell ends with a space
}

func (h *wordHandler) start(e xml.StartElement) (bool, error) {
	switch l := e.Name.Local; {
	case isProperties(l), l == "Fallback", l == "delText", l == "instrText":
		return true, nil
	case l == "t":
		h.inText = true
	case l == "tab", l == "ptab":
		h.out.sep('\t')
	case l == "br", l == "cr":
		h.out.sep('\n')
	case l == "tc":
		h.inCell++
	case l == "noBreakHyphen":
		return false, h.out.text("-")
	}
	return false, nil
}

func (h *wordHandler) end(l string) error {
	switch l {
	case "t":
		h.inText = false
	case "p":
		h.out.sep(cellOr(h.inCell, '\n'))
	case "tr", "txbxContent":
		h.out.sep('\n')
	case "tc":
		h.inCell = max(0, h.inCell-1)
		h.out.sep('\t')
	}
	return nil
}

func (h *wordHandler) chars(b []byte) error {
	if !h.inText {
		return nil
	}
	return h.out.text(string(b))
}

// readPPTX reads a presentation: each slide, then the speaker notes.
func readPPTX(ctx context.Context, r *run, data []byte) error {
	d, types, damage := openOOXML(ctx, r, data)
	if d == nil {
		return damage
	}
	parts := d.partsOf(types, "ppt/slides/slide", "presentationml.slide+xml")
	parts = append(parts, d.partsOf(types, "ppt/notesSlides/notesSlide", "presentationml.notesslide+xml")...)
	err := d.readParts(ctx, r, parts, func(rd io.Reader) error { return walkXML(ctx, r, rd, &drawingHandler{out: r.out}) })
	return cmp.Or(err, damage)
}

// drawingHandler writes the text of DrawingML shapes: a:t runs, a break after each
// paragraph (a:p) and line break (a:br), tabs between table cells.
type drawingHandler struct {
	out    *textOut
	inText bool
}

func (h *drawingHandler) start(e xml.StartElement) (bool, error) {
	switch l := e.Name.Local; {
	case isProperties(l), l == "Fallback":
		return true, nil
	case l == "t":
		h.inText = true
	case l == "br":
		h.out.sep('\n')
	}
	return false, nil
}

func (h *drawingHandler) end(l string) error {
	switch l {
	case "t":
		h.inText = false
	case "p", "tr", "sp":
		h.out.sep('\n')
	case "tc":
		h.out.sep('\t')
	}
	return nil
}

func (h *drawingHandler) chars(b []byte) error {
	if !h.inText {
		return nil
	}
	return h.out.text(string(b))
}
