package extract

import (
	"strings"
	"unicode/utf8"
)

// textOut collects the text of a document up to a number of bytes. Separators are
// written lazily: a run of them becomes its strongest (newline over tab over space), and
// none is written before the first text or after the last, so readers may emit one after
// every cell or paragraph without care. Text is kept valid UTF-8 and control characters
// become separators. Writing is linear in the text written.
type textOut struct {
	b       strings.Builder
	max     int
	pending byte // 0, ' ', '\t' or '\n': the separator owed before the next text
	cut     bool // text was dropped at max
}

func newTextOut(max int) *textOut { return &textOut{max: max} }

// String returns the text written so far.
func (t *textOut) String() string { return t.b.String() }

// sep owes a separator before the next text: ' ', '\t' or '\n'.
func (t *textOut) sep(c byte) {
	if t.b.Len() == 0 {
		return
	}
	if sepRank(c) > sepRank(t.pending) {
		t.pending = c
	}
}

func sepRank(c byte) int { return strings.IndexByte(" \t\n", c) + 1 }

// text writes s, returning errTextFull once the limit cut it.
func (t *textOut) text(s string) error {
	for len(s) > 0 {
		if t.cut {
			return errTextFull
		}
		i := cleanPrefix(s)
		if i > 0 {
			t.write(s[:i])
			s = s[i:]
			continue
		}
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n <= 1:
			t.write("\uFFFD")
		case r == '\t':
			t.sep('\t')
		case r == ' ', r == '\u00a0':
			t.sep(' ')
		default: // a control character: line breaks and the rest
			t.sep('\n')
		}
		s = s[n:]
	}
	if t.cut {
		return errTextFull
	}
	return nil
}

// cleanPrefix is the length of the longest prefix of s holding no control character,
// space or invalid UTF-8: text to copy as it is.
func cleanPrefix(s string) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || r < 0xa1 || r == '\u2028' || r == '\u2029' {
			return i
		}
		i += n
	}
	return i
}

// write appends clean text after the separator owed, cutting at the limit on a
// character boundary.
func (t *textOut) write(s string) {
	if t.pending != 0 {
		if t.b.Len()+1 > t.max {
			t.cut = true
			return
		}
		t.b.WriteByte(t.pending)
		t.pending = 0
	}
	if room := t.max - t.b.Len(); len(s) > room {
		for room > 0 && !utf8.RuneStart(s[room]) {
			room--
		}
		s, t.cut = s[:room], true
	}
	t.b.WriteString(s)
}
