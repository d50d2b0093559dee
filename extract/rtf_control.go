package extract

import "unicode/utf16"

// control reads what follows a backslash: a control symbol or a control word with its
// optional numeric parameter and the space that may end it.
func (p *rtfReader) control() error {
	if p.pos >= len(p.data) {
		return nil
	}
	c := p.data[p.pos]
	if !isASCIILetter(c) {
		p.pos++
		return p.symbol(c)
	}
	start := p.pos
	for p.pos < len(p.data) && p.pos-start < 32 && isASCIILetter(p.data[p.pos]) {
		p.pos++
	}
	word := string(p.data[start:p.pos])
	param, hasParam := p.number()
	if p.pos < len(p.data) && p.data[p.pos] == ' ' {
		p.pos++
	}
	if p.ucLeft > 0 {
		p.ucLeft--
		return nil
	}
	return p.word(word, param, hasParam)
}

// number reads a control word's parameter: an optional minus and up to 10 digits.
func (p *rtfReader) number() (int, bool) {
	neg := p.pos < len(p.data) && p.data[p.pos] == '-'
	i := p.pos
	if neg {
		i++
	}
	n, digits := 0, 0
	for i < len(p.data) && digits < 10 && '0' <= p.data[i] && p.data[i] <= '9' {
		n = n*10 + int(p.data[i]-'0')
		i++
		digits++
	}
	if digits == 0 {
		return 0, false
	}
	p.pos = i
	if neg {
		n = -n
	}
	return n, true
}

// symbol handles a control symbol: \'hh, escaped braces and backslash, special spaces
// and hyphens.
func (p *rtfReader) symbol(c byte) error {
	switch c {
	case '\'':
		if p.pos+2 > len(p.data) {
			p.pos = len(p.data)
			return nil
		}
		h, ok := hexByte(p.data[p.pos], p.data[p.pos+1])
		p.pos += 2
		if !ok {
			return nil
		}
		return p.char(h)
	case '\\', '{', '}':
		return p.char(c)
	case '*':
		p.g.skip = true
		return nil
	}
	if p.ucLeft > 0 {
		p.ucLeft--
		return nil
	}
	switch c {
	case '~':
		return p.text(" ")
	case '_':
		return p.text("-")
	case '\r', '\n':
		return p.text("\n")
	}
	return nil // \- optional hyphen, \| \: formula and index marks
}

// word handles a control word.
func (p *rtfReader) word(w string, n int, hasParam bool) error {
	if rtfSkipped[w] {
		p.g.skip = true
		return nil
	}
	if s, ok := rtfSymbols[w]; ok {
		return p.text(s)
	}
	switch w {
	case "fonttbl":
		p.g.fonts = true
	case "u":
		return p.unicode(n)
	case "uc":
		p.g.uc = max(0, min(n, 8))
	case "ansicpg":
		p.docCP = n
	case "mac":
		p.docCP = 10000
	case "pc":
		p.docCP = 437
	case "pca":
		p.docCP = 850
	case "f":
		if p.g.fonts {
			p.curFont = n
		} else {
			p.g.cp = p.fontCP[n]
		}
	case "fcharset":
		if p.g.fonts {
			p.fontCP[p.curFont] = rtfCharsets[n]
		}
	case "v":
		p.g.hidden = !hasParam || n != 0
	case "plain":
		p.g.hidden = false
	case "bin":
		p.pos = min(len(p.data), p.pos+max(0, n))
	}
	return nil
}

// unicode writes the character of \uN (N a signed 16-bit unit, surrogates paired) and
// skips the stand-ins that follow it.
func (p *rtfReader) unicode(n int) error {
	p.ucLeft = p.g.uc
	r := rune(uint16(int16(n)))
	switch {
	case utf16.IsSurrogate(r) && r < 0xdc00:
		p.high = r
		return nil
	case utf16.IsSurrogate(r):
		r = utf16.DecodeRune(p.high, r)
	}
	p.high = 0
	if r == 0 {
		return nil
	}
	return p.text(string(r))
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// hexByte decodes two hexadecimal digits.
func hexByte(a, b byte) (byte, bool) {
	x, ok1 := hexDigit(a)
	y, ok2 := hexDigit(b)
	return x<<4 | y, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
