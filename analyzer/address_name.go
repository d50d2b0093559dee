package analyzer

import (
	"fmt"
	"io"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
)

// addrWordDecoder decodes RFC 2047 encoded words in display names and comments, in
// the charsets mail clients use: WHATWG labels first, then IANA names.
var addrWordDecoder = &mime.WordDecoder{CharsetReader: addrCharsetReader}

func addrCharsetReader(charset string, r io.Reader) (io.Reader, error) {
	enc, err := htmlindex.Get(charset)
	if err != nil {
		enc, err = ianaindex.IANA.Encoding(charset)
	}
	if err != nil || enc == nil {
		return nil, fmt.Errorf("unsupported charset %q", charset)
	}
	return enc.NewDecoder().Reader(r), nil
}

// addrText returns s as UTF-8: itself when it is valid UTF-8, else read as
// windows-1252 (raw 8-bit text in a header has no declared charset).
func addrText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	t, err := charmap.Windows1252.NewDecoder().String(s)
	if err != nil {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return t
}

// addrDecode reads raw header text as UTF-8 and decodes its encoded words; a word in
// an unknown charset stays as written.
func addrDecode(s string) string {
	s = addrText(s)
	if strings.Contains(s, "=?") {
		if d, err := addrWordDecoder.DecodeHeader(s); err == nil {
			s = strings.ToValidUTF8(d, "\uFFFD")
		}
	}
	return strings.TrimSpace(s)
}

// phrase returns the display name the tokens spell: the words and specials with one
// space where white space or a comment stood, comments and angle brackets left out,
// quoted strings by their content, then decoded. It is a substring of the value (no
// allocation) when the name is written plainly.
func (p *addrParser) phrase(toks []addrTok) string {
	skip := func(t addrTok) bool { return t.kind == addrComment || t.is('<') || t.is('>') }
	n := 0
	for _, t := range toks {
		if !skip(t) {
			n++
		}
	}
	switch {
	case n == 0:
		return ""
	case n == 1 && len(toks) == 1:
		return addrDecode(toks[0].text)
	case n == len(toks) && p.singleSpaced(toks):
		return addrDecode(p.lex.s[toks[0].pos:toks[len(toks)-1].end])
	}
	var b strings.Builder
	gap := false
	for _, t := range toks {
		if skip(t) {
			gap = true
			continue
		}
		if b.Len() > 0 && (t.space || gap) {
			b.WriteByte(' ')
		}
		if t.kind == addrSpecial {
			b.WriteByte(t.ch)
		} else {
			b.WriteString(t.text)
		}
		gap = false
	}
	return addrDecode(b.String())
}

// singleSpaced reports whether the atoms and specials toks are written one after the
// other with at most one space between, as their space flags say.
func (p *addrParser) singleSpaced(toks []addrTok) bool {
	for i, t := range toks {
		if t.kind != addrAtom && t.kind != addrSpecial {
			return false
		}
		if i == 0 {
			continue
		}
		gap := t.pos - toks[i-1].end
		if t.space != (gap == 1 && p.lex.s[t.pos-1] == ' ') || !t.space && gap != 0 {
			return false
		}
	}
	return true
}

// commentName names the mailbox at index at, if it has no name yet, by the first
// comment in toks: the old "jdoe@one.test (John Doe)" form.
func (p *addrParser) commentName(at int, toks []addrTok) {
	if at < 0 || at >= len(p.out) || p.out[at].Name != "" {
		return
	}
	for _, t := range toks {
		if t.kind == addrComment {
			p.out[at].Name = addrDecode(t.text)
			return
		}
	}
}
