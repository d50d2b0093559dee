package extract

import (
	"cmp"
	"slices"
	"unicode/utf16"
)

// pdfCMap is what we read of a CMap (a font's ToUnicode map or an embedded encoding):
// the byte lengths of codes (codespace ranges) and the text of codes (bfchar, bfrange).
// Ranges stay ranges, so a map of <0000> <FFFF> costs one entry.
type pdfCMap struct {
	spaces []cmapSpace
	single map[uint64]string // key: length<<32 | code
	ranges []cmapRange       // sorted by length, then lo
}

type cmapSpace struct {
	lo, hi uint32
	n      int
}

type cmapRange struct {
	lo, hi uint32
	n      int
	base   []uint16 // the UTF-16 text of lo; code lo+k adds k to its last unit
}

// parseCMap reads the codespace ranges, bfchar and bfrange sections of a CMap, linear in
// its size; anything else (cidrange, usecmap, PostScript) is skipped.
func parseCMap(b []byte) *pdfCMap {
	m := &pdfCMap{single: map[uint64]string{}}
	l := &pdfLexer{b: b}
	section := ""
	var args [][]byte // the string operands since the last operator
	for {
		t, w, _ := l.next()
		switch t {
		case tokEOF:
			slices.SortFunc(m.ranges, func(a, b cmapRange) int {
				return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.lo, b.lo))
			})
			return m
		case tokStr:
			args = append(args, append([]byte(nil), w...))
		case tokArrOpen:
			if section == "bfrange" && len(args) == 2 {
				m.rangeArray(l, args[0], args[1])
			}
			args = args[:0]
		case tokOp:
			section = cmapSection(w, section)
			args = args[:0]
		default:
			args = args[:0]
		}
		switch {
		case section == "codespacerange" && len(args) == 2:
			m.addSpace(args[0], args[1])
		case section == "bfchar" && len(args) == 2:
			m.single[codeKey(args[0])] = utf16Text(args[1])
		case section == "bfrange" && len(args) == 3:
			m.addRange(args[0], args[1], args[2])
		default:
			continue
		}
		args = args[:0]
	}
}

// cmapSection returns the section a keyword opens (begincodespacerange →
// codespacerange) or closes ("").
func cmapSection(w []byte, cur string) string {
	switch s := string(w); {
	case len(s) > 5 && s[:5] == "begin":
		return s[5:]
	case len(s) > 3 && s[:3] == "end":
		return ""
	}
	return cur
}

// code returns the value of a code's bytes (at most 4 are significant).
func code(b []byte) uint32 {
	var c uint32
	for _, x := range b[max(0, len(b)-4):] {
		c = c<<8 | uint32(x)
	}
	return c
}

func codeKey(b []byte) uint64 { return uint64(min(len(b), 4))<<32 | uint64(code(b)) }

// utf16Text decodes UTF-16BE (a destination of bfchar or bfrange).
func utf16Text(b []byte) string { return string(utf16.Decode(units(b))) }

func units(b []byte) []uint16 {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
	}
	if len(b)%2 == 1 { // one byte alone: a Latin-1 character, as some writers put it
		u = append(u, uint16(b[len(b)-1]))
	}
	return u
}

func (m *pdfCMap) addSpace(lo, hi []byte) {
	if len(lo) >= 1 && len(lo) <= 4 && len(m.spaces) < 256 {
		m.spaces = append(m.spaces, cmapSpace{lo: code(lo), hi: code(hi), n: len(lo)})
	}
}

func (m *pdfCMap) addRange(lo, hi, dst []byte) {
	n := min(len(lo), 4)
	if n == 0 || len(dst) == 0 {
		return
	}
	m.ranges = append(m.ranges, cmapRange{lo: code(lo), hi: max(code(lo), code(hi)), n: n, base: units(dst)})
}

// rangeArray reads the [dst …] of a bfrange: one destination per code from lo.
func (m *pdfCMap) rangeArray(l *pdfLexer, lo, hi []byte) {
	c, last := code(lo), code(hi)
	for {
		t, w, _ := l.next()
		if t != tokStr {
			return // ] or anything unexpected ends the array
		}
		if c <= last {
			m.single[uint64(min(len(lo), 4))<<32|uint64(c)] = utf16Text(w)
			c++
		}
	}
}

// lookup returns the text of the code of n bytes, ok=false when the map has none.
func (m *pdfCMap) lookup(c uint32, n int) (string, bool) {
	if s, ok := m.single[uint64(n)<<32|uint64(c)]; ok {
		return s, true
	}
	i, _ := slices.BinarySearchFunc(m.ranges, cmapRange{n: n, lo: c}, func(a, b cmapRange) int {
		return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.lo, b.lo))
	})
	// ranges[i] is the first with (n, lo) >= (n, c): the match is it when lo == c, else
	// the one before.
	if i < len(m.ranges) && m.ranges[i].n == n && m.ranges[i].lo == c {
		return m.ranges[i].text(c), true
	}
	if i > 0 && m.ranges[i-1].n == n && m.ranges[i-1].lo <= c && c <= m.ranges[i-1].hi {
		return m.ranges[i-1].text(c), true
	}
	return "", false
}

func (r cmapRange) text(c uint32) string {
	u := slices.Clone(r.base)
	u[len(u)-1] += uint16(c - r.lo)
	return string(utf16.Decode(u))
}

// codeLength returns the byte length of the code at the start of b by the codespace
// ranges, or 0 when there are none.
func (m *pdfCMap) codeLength(b []byte) int {
	for n := 1; n <= 4 && n <= len(b); n++ {
		c := code(b[:n])
		for _, s := range m.spaces {
			if s.n == n && s.lo <= c && c <= s.hi {
				return n
			}
		}
	}
	return 0
}
