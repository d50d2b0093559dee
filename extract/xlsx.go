package extract

import (
	"cmp"
	"context"
	"encoding/xml"
	"io"
	"strconv"
	"strings"
)

// readXLSX reads a workbook: the cells of each worksheet, row by row, with the shared
// strings they point at, inline strings, formula results and numbers as stored.
func readXLSX(ctx context.Context, r *run, data []byte) error {
	d, types, damage := openOOXML(ctx, r, data)
	if d == nil {
		return damage
	}
	shared := &sharedStrings{}
	ssParts := d.partsOf(types, "xl/sharedStrings", "spreadsheetml.sharedstrings+xml")
	err := d.readParts(ctx, r, ssParts, func(rd io.Reader) error { return walkXML(ctx, r, rd, shared) })
	if err != nil && !isDamage(err) {
		return err
	}
	damage = cmp.Or(damage, err)
	sheets := d.partsOf(types, "xl/worksheets/sheet", "spreadsheetml.worksheet+xml")
	err = d.readParts(ctx, r, sheets, func(rd io.Reader) error {
		return walkXML(ctx, r, rd, &sheetHandler{out: r.out, shared: shared.list, most: r.lim.MaxText})
	})
	return cmp.Or(err, damage)
}

// sharedStrings collects the strings of xl/sharedStrings.xml: the t elements of each si,
// without the phonetic readings (rPh). They total at most the part's size.
type sharedStrings struct {
	list   []string
	cur    strings.Builder
	inText bool
}

func (s *sharedStrings) start(e xml.StartElement) (bool, error) {
	switch e.Name.Local {
	case "rPh", "rPr", "phoneticPr":
		return true, nil
	case "si":
		s.cur.Reset()
	case "t":
		s.inText = true
	}
	return false, nil
}

func (s *sharedStrings) end(l string) error {
	switch l {
	case "t":
		s.inText = false
	case "si":
		s.list = append(s.list, s.cur.String())
	}
	return nil
}

func (s *sharedStrings) chars(b []byte) error {
	if s.inText {
		s.cur.Write(b)
	}
	return nil
}

// sheetHandler writes the cells of a worksheet: a tab after each cell, a line after each
// row. A cell's value (v) is an index into the shared strings (t="s"), an inline string
// (t="inlineStr", is/t), a formula's string result (t="str") or a number; booleans and
// errors are not text. Formulas (f) are hidden.
type sheetHandler struct {
	out    *textOut
	shared []string
	most   int // bytes of one value kept: no more can be written
	typ    string
	val    strings.Builder
	inVal  bool
}

func (h *sheetHandler) start(e xml.StartElement) (bool, error) {
	switch e.Name.Local {
	case "f", "extLst", "rPh", "rPr":
		return true, nil
	case "c":
		h.typ = attr(e, "t")
		h.val.Reset()
	case "v", "t":
		h.inVal = true
	}
	return false, nil
}

func (h *sheetHandler) end(l string) error {
	switch l {
	case "v", "t":
		h.inVal = false
	case "c":
		return h.cell()
	case "row":
		h.out.sep('\n')
	}
	return nil
}

func (h *sheetHandler) chars(b []byte) error {
	if h.inVal && h.val.Len() <= h.most {
		h.val.Write(b)
	}
	return nil
}

// cell writes the value of the cell just closed.
func (h *sheetHandler) cell() error {
	v := h.val.String()
	switch h.typ {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || i < 0 || i >= len(h.shared) {
			return nil
		}
		v = h.shared[i]
	case "b", "e":
		return nil
	}
	if err := h.out.text(v); err != nil {
		return err
	}
	h.out.sep('\t')
	return nil
}
