package extract

import "strconv"

// pdfTok is the kind of a token of a content stream or CMap.
type pdfTok int

const (
	tokEOF pdfTok = iota
	tokNum
	tokStr // a literal or hexadecimal string, its bytes decoded
	tokName
	tokArrOpen
	tokArrClose
	tokDictOpen
	tokDictClose
	tokOp // an operator or any other bare word
)

// pdfLexer splits PDF content into tokens, in one pass without backtracking. Malformed
// input yields odd tokens, never an error: readers take what makes sense.
type pdfLexer struct {
	b   []byte
	pos int
	buf []byte // the bytes of the last string token, reused
}

// next returns the next token: its kind, its bytes (string, name, operator) and value
// (number).
func (l *pdfLexer) next() (pdfTok, []byte, float64) {
	for {
		l.skipSpace()
		if l.pos >= len(l.b) {
			return tokEOF, nil, 0
		}
		if t, w, f, ok := l.token(); ok {
			return t, w, f
		}
		l.pos++ // a delimiter out of place: ) > { } skipped one at a time
	}
}

// token reads the token at l.pos, or ok=false at a stray delimiter.
func (l *pdfLexer) token() (t pdfTok, w []byte, f float64, ok bool) {
	c := l.b[l.pos]
	switch {
	case c == '(':
		l.pos++
		return tokStr, l.literal(), 0, true
	case c == '<' && l.peek(1) == '<':
		l.pos += 2
		return tokDictOpen, nil, 0, true
	case c == '>' && l.peek(1) == '>':
		l.pos += 2
		return tokDictClose, nil, 0, true
	case c == '<':
		l.pos++
		return tokStr, l.hex(), 0, true
	case c == '[':
		l.pos++
		return tokArrOpen, nil, 0, true
	case c == ']':
		l.pos++
		return tokArrClose, nil, 0, true
	case c == '/':
		l.pos++
		return tokName, l.word(), 0, true
	case c == '+' || c == '-' || c == '.' || '0' <= c && c <= '9':
		w := l.word()
		if f, err := strconv.ParseFloat(string(w), 64); err == nil {
			return tokNum, w, f, true
		}
		return tokOp, w, 0, true
	}
	w = l.word()
	return tokOp, w, 0, len(w) > 0
}

func (l *pdfLexer) peek(i int) byte {
	if l.pos+i < len(l.b) {
		return l.b[l.pos+i]
	}
	return 0
}

// skipSpace skips white space and comments.
func (l *pdfLexer) skipSpace() {
	for l.pos < len(l.b) {
		switch c := l.b[l.pos]; {
		case c == '%':
			for l.pos < len(l.b) && l.b[l.pos] != '\n' && l.b[l.pos] != '\r' {
				l.pos++
			}
		case pdfSpace(c):
			l.pos++
		default:
			return
		}
	}
}

func pdfSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func pdfDelimiter(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return pdfSpace(c)
}

// word reads up to the next delimiter (a name or a number or an operator).
func (l *pdfLexer) word() []byte {
	start := l.pos
	for l.pos < len(l.b) && !pdfDelimiter(l.b[l.pos]) {
		l.pos++
	}
	return l.b[start:l.pos]
}

// literal reads a (string) after its opening parenthesis: balanced parentheses,
// backslash escapes, octal codes, line continuations.
func (l *pdfLexer) literal() []byte {
	l.buf = l.buf[:0]
	depth := 1
	for l.pos < len(l.b) {
		c := l.b[l.pos]
		l.pos++
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return l.buf
			}
		case '\\':
			l.escape()
			continue
		}
		l.buf = append(l.buf, c)
	}
	return l.buf
}

// escape reads what follows a backslash in a literal string.
func (l *pdfLexer) escape() {
	if l.pos >= len(l.b) {
		return
	}
	c := l.b[l.pos]
	l.pos++
	switch c {
	case 'n':
		l.buf = append(l.buf, '\n')
	case 'r':
		l.buf = append(l.buf, '\r')
	case 't':
		l.buf = append(l.buf, '\t')
	case 'b':
		l.buf = append(l.buf, '\b')
	case 'f':
		l.buf = append(l.buf, '\f')
	case '\r':
		if l.peek(0) == '\n' {
			l.pos++
		}
	case '\n':
	default:
		if '0' <= c && c <= '7' {
			v := int(c - '0')
			for i := 0; i < 2 && l.pos < len(l.b) && '0' <= l.b[l.pos] && l.b[l.pos] <= '7'; i++ {
				v = v*8 + int(l.b[l.pos]-'0')
				l.pos++
			}
			l.buf = append(l.buf, byte(v))
			return
		}
		l.buf = append(l.buf, c) // \( \) \\ and unknown escapes: the character
	}
}

// hex reads a <hex string> after its opening bracket; white space is ignored and an odd
// last digit is followed by 0.
func (l *pdfLexer) hex() []byte {
	l.buf = l.buf[:0]
	var hi byte
	half := false
	for l.pos < len(l.b) {
		c := l.b[l.pos]
		l.pos++
		if c == '>' {
			break
		}
		v, ok := hexDigit(c)
		if !ok {
			continue
		}
		if half {
			l.buf = append(l.buf, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		l.buf = append(l.buf, hi<<4)
	}
	return l.buf
}

// skipInlineImage skips the data of an inline image after its ID operator, to the EI
// operator standing alone between white space.
func (l *pdfLexer) skipInlineImage() {
	if l.pos < len(l.b) && pdfSpace(l.b[l.pos]) {
		l.pos++
	}
	for i := l.pos; i+1 < len(l.b); i++ {
		if l.b[i] == 'E' && l.b[i+1] == 'I' && (i == 0 || pdfSpace(l.b[i-1])) && (i+2 == len(l.b) || pdfDelimiter(l.b[i+2])) {
			l.pos = i + 2
			return
		}
	}
	l.pos = len(l.b)
}
