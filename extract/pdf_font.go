package extract

import (
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
	"golang.org/x/text/encoding"
)

// pdfFont is what the text of a font's strings needs: how codes are cut (one byte in a
// simple font, by the encoding CMap in a composite one), their text (ToUnicode first,
// then the simple font's encoding or a composite font's Unicode or legacy CJK CMap) and
// their widths, for the spaces between runs.
type pdfFont struct {
	composite bool
	toUnicode *pdfCMap
	encoding  *pdfCMap           // an embedded CMap of a composite font: its codespaces
	simple    *[256]string       // a simple font's encoding with its Differences
	unicode   bool               // composite, codes are UTF-16 (Uni…-UCS2 and -UTF16 CMaps)
	legacy    encoding.Encoding  // composite, codes are a CJK code page (90ms-RKSJ, GBK-EUC …)
	widths    map[uint32]float64 // in text space units per unit of font size
	ranges    []widthRange       // a composite font's W ranges
	dflt      float64            // width of a code with none given
}

type widthRange struct {
	lo, hi uint32
	w      float64
}

// defaultFont reads strings when the font is missing: one byte per code, WinAnsi.
var defaultFont = &pdfFont{simple: &winAnsi, dflt: 0.5}

// font returns the font of a resource dictionary entry, read once per object.
func (d *pdfDoc) font(o types.Object) *pdfFont {
	key := -1
	if ir, ok := o.(types.IndirectRef); ok {
		key = ir.ObjectNumber.Value()
		if f := d.fonts[key]; f != nil {
			return f
		}
	}
	f := d.readFont(d.dict(o))
	if key >= 0 {
		d.fonts[key] = f
	}
	return f
}

func (d *pdfDoc) readFont(fd types.Dict) *pdfFont {
	if fd == nil {
		return defaultFont
	}
	f := &pdfFont{widths: map[uint32]float64{}, dflt: 0.5}
	if b, err := d.stream(fd["ToUnicode"]); err == nil && len(b) > 0 {
		f.toUnicode = parseCMap(b)
	}
	if d.name(fd["Subtype"]) == "Type0" {
		d.compositeFont(f, fd)
		return f
	}
	d.simpleFont(f, fd)
	return f
}

// simpleFont reads a one-byte font: its encoding and its widths.
func (d *pdfDoc) simpleFont(f *pdfFont, fd types.Dict) {
	base := d.name(fd["BaseFont"])
	if i := strings.IndexByte(base, '+'); i == 6 { // a subset prefix ABCDEF+
		base = base[i+1:]
	}
	table := winAnsi
	if base == "Symbol" || base == "ZapfDingbats" {
		table = [256]string{} // no text without a ToUnicode map
	}
	enc := d.resolve(fd["Encoding"])
	if ed := d.dict(enc); ed != nil {
		table = baseEncoding(d.name(ed["BaseEncoding"]), table)
		d.differences(&table, d.array(ed["Differences"]))
	} else {
		table = baseEncoding(d.name(enc), table)
	}
	f.simple = &table
	scale := 0.001
	if m := d.array(fd["FontMatrix"]); len(m) > 0 {
		if v, ok := d.number(m[0]); ok {
			scale = v
		}
	}
	first, _ := d.number(fd["FirstChar"])
	for i, w := range d.array(fd["Widths"]) {
		if v, ok := d.number(w); ok && i < 256 {
			f.widths[uint32(int(first)+i)] = v * scale
		}
	}
	if desc := d.dict(fd["FontDescriptor"]); desc != nil {
		if v, ok := d.number(desc["MissingWidth"]); ok && v > 0 {
			f.dflt = v * scale
		}
	}
}

// baseEncoding returns the table of a named encoding, or dflt.
func baseEncoding(name string, dflt [256]string) [256]string {
	switch name {
	case "WinAnsiEncoding":
		return winAnsi
	case "MacRomanEncoding":
		return macRoman
	case "StandardEncoding":
		return standard
	}
	return dflt
}

// differences applies an Encoding's Differences array: a code, then glyph names for it
// and the codes after it.
func (d *pdfDoc) differences(table *[256]string, diffs types.Array) {
	c := 0
	for _, o := range diffs {
		switch v := d.resolve(o).(type) {
		case types.Integer:
			c = int(v)
		case types.Name:
			if c >= 0 && c < 256 {
				table[c] = glyphText(string(v))
			}
			c++
		}
	}
}

// compositeFont reads a Type0 font: its encoding CMap and its descendant's widths.
func (d *pdfDoc) compositeFont(f *pdfFont, fd types.Dict) {
	f.composite, f.dflt = true, 1
	enc := d.resolve(fd["Encoding"])
	if _, ok := enc.(types.StreamDict); ok {
		if b, err := d.stream(enc); err == nil {
			f.encoding = parseCMap(b)
		}
	} else {
		name := d.name(enc)
		f.unicode = strings.Contains(name, "UCS2") || strings.Contains(name, "UTF16")
		f.legacy = legacyCMaps(name)
	}
	desc := d.array(fd["DescendantFonts"])
	if len(desc) == 0 {
		return
	}
	cid := d.dict(desc[0])
	if v, ok := d.number(cid["DW"]); ok {
		f.dflt = v / 1000
	}
	f.ranges = d.cidWidths(d.array(cid["W"]))
}

// cidWidths reads a W array: c [w1 w2 …] and cfirst clast w entries.
func (d *pdfDoc) cidWidths(w types.Array) []widthRange {
	var out []widthRange
	for i := 0; i+1 < len(w); {
		c, _ := d.number(w[i])
		if arr := d.array(w[i+1]); arr != nil {
			for k, x := range arr {
				v, _ := d.number(x)
				out = append(out, widthRange{uint32(c) + uint32(k), uint32(c) + uint32(k), v / 1000})
			}
			i += 2
			continue
		}
		if i+2 >= len(w) {
			break
		}
		last, _ := d.number(w[i+1])
		v, _ := d.number(w[i+2])
		out = append(out, widthRange{uint32(c), uint32(last), v / 1000})
		i += 3
	}
	slices.SortFunc(out, func(a, b widthRange) int { return int(int64(a.lo) - int64(b.lo)) })
	return out
}

// width returns the advance of a code, in units of the font size.
func (f *pdfFont) width(c uint32) float64 {
	if w, ok := f.widths[c]; ok {
		return w
	}
	i, found := slices.BinarySearchFunc(f.ranges, c, func(r widthRange, c uint32) int { return int(int64(r.lo) - int64(c)) })
	if found {
		return f.ranges[i].w
	}
	if i > 0 && c <= f.ranges[i-1].hi {
		return f.ranges[i-1].w
	}
	return f.dflt
}

// each calls fn with each code of s: its value, its byte length and its text.
func (f *pdfFont) each(s []byte, fn func(c uint32, n int, text string)) {
	if f.composite && f.legacy != nil && f.toUnicode == nil {
		text, _ := f.legacy.NewDecoder().Bytes(s)
		fn(0, len(s), string(text))
		return
	}
	for len(s) > 0 {
		n := f.codeLength(s)
		c := code(s[:n])
		fn(c, n, f.text(c, n, s[:n]))
		s = s[n:]
	}
}

func (f *pdfFont) codeLength(s []byte) int {
	for _, m := range []*pdfCMap{f.encoding, f.toUnicode} {
		if m != nil {
			if n := m.codeLength(s); n > 0 {
				return n
			}
		}
	}
	if f.composite && len(s) >= 2 {
		return 2
	}
	return 1
}

func (f *pdfFont) text(c uint32, n int, raw []byte) string {
	if f.toUnicode != nil {
		if s, ok := f.toUnicode.lookup(c, n); ok {
			return s
		}
	}
	switch {
	case f.simple != nil && n == 1:
		return f.simple[c]
	case f.unicode:
		return string(utf16.Decode(units(raw)))
	}
	return "" // a glyph id with no map to text: nothing a search can use
}
