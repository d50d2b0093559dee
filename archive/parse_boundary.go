package archive

import (
	"bytes"
	"unicode"
)

// boundaries finds the parts of one multipart body (region) the way enmime's boundaryReader
// does; pos is where its reading stands.
type boundaries struct {
	region []byte
	prefix []byte // "--boundary"
	final  []byte // "--boundary--"
	pos    int
	parts  int
}

func newBoundaries(region []byte, boundary string) *boundaries {
	final := []byte("--" + boundary + "--")
	return &boundaries{region: region, prefix: final[:len(final)-2], final: final}
}

// next does what boundaryReader.Next does: from pos it skips blank lines and, before the
// first part, preamble lines, up to a delimiter line (the next part starts after it) or the
// closing one. Anything else, the end of the body included, is left to enmime.
func (b *boundaries) next() (start int, more bool, err error) {
	for b.pos < len(b.region) {
		line := b.region[b.pos:]
		atEOF := true
		if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
			line, atEOF = line[:nl+1], false
		}
		b.pos += len(line)
		switch {
		case line[0] == '\r' || line[0] == '\n':
			continue
		case b.isTerminator(line):
			return 0, false, nil
		case !atEOF && b.isDelimiter(line):
			b.parts++
			return b.pos, true, nil
		case !atEOF && b.parts == 0:
			continue // preamble
		case atEOF:
			return 0, false, declined("closing boundary missing")
		default:
			return 0, false, declined("line %q where a boundary was expected", truncate(line))
		}
	}
	return 0, false, declined("closing boundary missing")
}

// partEnd returns where the part starting at start ends: the first byte at which
// boundaryReader.Read would see a boundary. Every such place has "--boundary" within its
// first four bytes, so only those found with bytes.Index are checked. A boundary that does
// not begin at a line break makes enmime read on past it at times; those are left to enmime.
func (b *boundaries) partEnd(start int) (int, error) {
	checked := start
	for from := start; ; {
		q := bytes.Index(b.region[from:], b.prefix)
		if q < 0 {
			return 0, declined("boundary not closed")
		}
		q += from
		for i := max(q-3, checked); i <= q; i++ {
			if b.boundaryAt(i, i-start < partStartWindow) {
				if c := b.region[i]; c != '\r' && c != '\n' {
					return 0, declined("boundary in the middle of a line")
				}
				return i, nil
			}
		}
		checked, from = q+1, q+1
	}
}

// boundaryAt is the test boundaryReader.Read makes before reading the byte at i: at a line
// break (or, near the start of a part, anywhere) it peeks ahead for a delimiter or the
// closing boundary, except before a blank line. A peek that would run past the end finds
// nothing (enmime then flags the body as unbounded; such a body has no boundary after i and
// is declined).
func (b *boundaries) boundaryAt(i int, atPartStart bool) bool {
	padding := 1
	switch b.region[i] {
	case '\r':
		padding = 2
	case '\n':
	default:
		if !atPartStart {
			return false
		}
		padding = 0
	}
	n := len(b.prefix) + 2 + padding // len("\n--boundary") + padding + 1
	if i+n > len(b.region) {
		return false
	}
	peek := b.region[i : i+n]
	for _, blank := range []string{"\n\n", "\n\r", "\r\n\r", "\r\n\n"} {
		if bytes.HasPrefix(peek, []byte(blank)) {
			return false
		}
	}
	return b.isDelimiter(peek[padding:]) || b.isTerminator(peek[padding:])
}

// isDelimiter is boundaryReader.isDelimiter: "--boundary" followed by white space, anywhere.
func (b *boundaries) isDelimiter(buf []byte) bool {
	i := bytes.Index(buf, b.prefix)
	if i < 0 {
		return false
	}
	rest := buf[i+len(b.prefix):]
	return len(rest) > 0 && unicode.IsSpace(rune(rest[0]))
}

// isTerminator is boundaryReader.isTerminator: "--boundary--" anywhere.
func (b *boundaries) isTerminator(buf []byte) bool {
	return bytes.Contains(buf, b.final)
}

func truncate(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}
