package analyzer

import "strings"

// The lexer cuts a header value into RFC 5322 tokens in one pass, without recursion.
// It is lenient where mail is broken, and stays linear:
//   - white space, CR, LF and the other control characters separate tokens (FWS);
//   - a stray ")" is white space; "\" and "]" outside quotes are text;
//   - a quoted string, comment or domain literal that never closes is not one: its
//     opening character is read again as text (a "(" as white space), and so is every
//     later one of its kind, so each kind costs at most one extra pass;
//   - comments nest by a counter, so their depth is bounded by nothing but the input;
//   - an RFC 2047 encoded word at the start of a token is one atom even when it holds
//     specials ("=?utf-8?q?Doe,_John?="), so that a display name is not cut apart.

// addrTokKind is the kind of a token.
type addrTokKind uint8

const (
	addrAtom    addrTokKind = iota + 1 // a run of text characters
	addrQuoted                         // a quoted string; text is its content
	addrLiteral                        // a domain literal; text is its content
	addrComment                        // a comment; text is its content
	addrSpecial                        // one of < > @ , : ; . (in ch)
)

// addrTok is one token. Its strings point into the header value where they can.
type addrTok struct {
	kind  addrTokKind
	ch    byte   // the character of a special
	space bool   // white space or a comment comes before it
	text  string // atom: as written; quoted, literal, comment: the content, unescaped
	pos   int32  // where the token starts in the value (ParseList reads at most 2 GiB)
	end   int32  // where it ends
}

// addrMaxEncodedWord bounds the look-ahead for an encoded word; RFC 2047 allows 75.
const addrMaxEncodedWord = 1000

// addrLexer reads tokens from a header value.
type addrLexer struct {
	s         string
	pos       int
	noQuote   bool // a quoted string did not close: '"' is text from now on
	noComment bool // a comment did not close: '(' is white space from now on
	noLiteral bool // a domain literal did not close: '[' is text from now on
	unclosed  bool // any of the three happened
	ewFail    int  // no encoded word can start before this position
}

// addrIsSpace reports whether c separates tokens as white space: SP, HT, CR, LF and
// every other control character.
func addrIsSpace(c byte) bool { return c <= ' ' || c == 0x7f }

// addrIsSpecial reports whether c is an RFC 5322 special the parser uses.
func addrIsSpecial(c byte) bool { return strings.IndexByte("<>@,:;.", c) >= 0 }

// delim reports whether c ends an atom.
func (l *addrLexer) delim(c byte) bool {
	switch {
	case addrIsSpace(c) || addrIsSpecial(c) || c == '(' || c == ')':
		return true
	case c == '"':
		return !l.noQuote
	case c == '[':
		return !l.noLiteral
	}
	return false
}

// next returns the next token, or false at the end of the value.
func (l *addrLexer) next() (addrTok, bool) {
	space := false
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		var t addrTok
		ok := true
		switch {
		case addrIsSpace(c) || c == ')' || c == '(' && l.noComment:
			l.pos++
			space = true
			continue
		case c == '(':
			t, ok = l.comment()
		case c == '"' && !l.noQuote:
			t, ok = l.quoted()
		case c == '[' && !l.noLiteral:
			t, ok = l.literal()
		case addrIsSpecial(c):
			t = addrTok{kind: addrSpecial, ch: c, pos: int32(l.pos), end: int32(l.pos + 1)}
			l.pos++
		default:
			t = l.atom()
		}
		if !ok {
			continue // the opener is now text or white space: read it again
		}
		t.space = space
		return t, true
	}
	return addrTok{}, false
}

func (l *addrLexer) atom() addrTok {
	start := l.pos
	if end := l.encodedWord(); end > 0 {
		l.pos = end
		return addrTok{kind: addrAtom, text: l.s[start:end], pos: int32(start), end: int32(end)}
	}
	i := start + 1
	for i < len(l.s) && !l.delim(l.s[i]) {
		i++
	}
	l.pos = i
	return addrTok{kind: addrAtom, text: l.s[start:i], pos: int32(start), end: int32(i)}
}

// encodedWord returns the end of an RFC 2047 encoded word at l.pos, or 0.
func (l *addrLexer) encodedWord() int {
	s, start := l.s, l.pos
	if start < l.ewFail || !strings.HasPrefix(s[start:], "=?") {
		return 0
	}
	limit := min(len(s), start+addrMaxEncodedWord)
	i := start + 2
	for i < limit && s[i] != '?' && !l.delim(s[i]) { // charset
		i++
	}
	if i+2 >= limit || i == start+2 || s[i] != '?' || s[i+2] != '?' || strings.IndexByte("bBqQ", s[i+1]) < 0 {
		return 0
	}
	for i += 3; i < limit && !addrIsSpace(s[i]); i++ { // encoded text
		if s[i] == '?' && i+1 < len(s) && s[i+1] == '=' {
			return i + 2
		}
	}
	if i < limit || limit == len(s) { // white space or the end: no later start can close either
		l.ewFail = i
	}
	return 0
}

// quoted reads a quoted string; on no closing quote it returns false.
func (l *addrLexer) quoted() (addrTok, bool) {
	start := l.pos
	for i := start + 1; i < len(l.s); i++ {
		switch l.s[i] {
		case '\\':
			i++
		case '"':
			l.pos = i + 1
			return addrTok{kind: addrQuoted, text: addrUnescape(l.s[start+1:i], false), pos: int32(start), end: int32(i + 1)}, true
		}
	}
	l.noQuote, l.unclosed = true, true
	return addrTok{}, false
}

// comment reads a comment, nested comments included; on no closing ")" it returns false.
func (l *addrLexer) comment() (addrTok, bool) {
	start, depth := l.pos, 0
	for i := start; i < len(l.s); i++ {
		switch l.s[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				l.pos = i + 1
				return addrTok{kind: addrComment, text: addrUnescape(l.s[start+1:i], false), pos: int32(start), end: int32(i + 1)}, true
			}
		}
	}
	l.noComment, l.unclosed = true, true
	return addrTok{}, false
}

// literal reads a domain literal; on no closing "]" it returns false.
func (l *addrLexer) literal() (addrTok, bool) {
	start := l.pos
	for i := start + 1; i < len(l.s); i++ {
		switch l.s[i] {
		case '\\':
			i++
		case '[':
			i = len(l.s) // "[" cannot stand in a literal
		case ']':
			l.pos = i + 1
			return addrTok{kind: addrLiteral, text: addrUnescape(l.s[start+1:i], true), pos: int32(start), end: int32(i + 1)}, true
		}
	}
	l.noLiteral, l.unclosed = true, true
	return addrTok{}, false
}

// addrUnescape removes quoted-pair backslashes, CR, LF and the control characters
// other than HT; with dropSpace it removes white space too (in a domain literal).
// It allocates only when something is removed.
func addrUnescape(s string, dropSpace bool) string {
	clean := func(c byte) bool {
		return c != '\\' && (c >= ' ' && c != 0x7f || c == '\t') && !(dropSpace && (c == ' ' || c == '\t'))
	}
	i := 0
	for i < len(s) && clean(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			c = s[i]
		} else if c == '\\' {
			continue
		}
		if c >= ' ' && c != 0x7f || c == '\t' && !dropSpace {
			if !(dropSpace && c == ' ') {
				b = append(b, c)
			}
		}
	}
	return string(b)
}
