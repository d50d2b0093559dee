package analyzer

import (
	"math"
	"strings"
)

// ParseList returns every mailbox of an RFC 5322 address-list or mailbox-list (a
// From, To, Cc, ... field value, folding included), in order. It reads the obsolete
// syntax of RFC 5322 section 4 (comments and folding wherever CFWS may stand, inside
// local parts and domains too; obs-route; obs-local-part; obs-phrase; empty list
// elements), groups (their members count, their names do not), RFC 2047 encoded words
// in display names (never in addresses), RFC 6532 UTF-8 and raw 8-bit text (read as
// windows-1252 when it is not UTF-8).
//
// Each element of the list is parsed on its own, and a broken one still yields the
// mailboxes that can be recovered from it: an address in angle brackets among junk,
// addresses separated by white space instead of commas, a missing ">" or quote. A
// display name is never an address: in `"a@b.example" <c@d.example>` only c@d.example
// is one. An address without a domain (`<matmail>`, `root`) is not returned, nor one
// whose key would be longer than MaxKeyBytes.
//
// ParseList takes time and memory linear in the length of raw, without recursion; it
// reads at most the first 2 GiB of raw.
func ParseList(raw string) []Mailbox {
	raw = raw[:min(len(raw), math.MaxInt32)]
	p := addrParser{lex: addrLexer{s: raw}}
	p.run()
	return p.out
}

// addrParser parses one header value, one list element at a time.
type addrParser struct {
	lex     addrLexer
	elem    []addrTok // the tokens of the current list element
	tmp     []addrTok
	found   []addrFound // where the mailboxes of the last scan are
	out     []Mailbox
	domains map[string]string // domain as written -> its key ("" when invalid)
	err     error             // why the last addr-spec was not a mailbox
}

// addrFound is the token range of a mailbox found by scan.
type addrFound struct{ start, end int }

func (t addrTok) is(c byte) bool { return t.kind == addrSpecial && t.ch == c }

// run cuts the value into list elements at the commas, colons and semicolons outside
// angle brackets. What comes before a colon is a group's display name: dropped. A "<"
// that meets another "<" or the end before a ">" did not open anything: the element
// is cut again at the separators that followed it (each token once at most).
func (p *addrParser) run() {
	open := -1 // where the "<" is in p.elem while inside angle brackets
	for t, ok := p.lex.next(); ok; t, ok = p.lex.next() {
		if t.kind == addrSpecial {
			switch {
			case open >= 0 && t.ch == '>':
				open = -1
			case open >= 0 && t.ch == '<':
				p.resplit(open)
				open = len(p.elem)
			case open >= 0:
			case t.ch == ',' || t.ch == ';':
				p.flush()
				continue
			case t.ch == ':':
				p.elem = p.elem[:0]
				continue
			case t.ch == '<':
				open = len(p.elem)
			}
		}
		p.elem = append(p.elem, t)
	}
	if open >= 0 {
		p.resplit(open)
	}
	p.flush()
}

func (p *addrParser) resplit(open int) {
	p.tmp = append(p.tmp[:0], p.elem[open:]...)
	p.elem = p.elem[:open]
	for _, t := range p.tmp {
		switch {
		case t.is(',') || t.is(';'):
			p.flush()
		case t.is(':'):
			p.elem = p.elem[:0]
		default:
			p.elem = append(p.elem, t)
		}
	}
}

func (p *addrParser) flush() {
	if len(p.elem) > 0 {
		p.element(p.elem)
	}
	p.elem = p.elem[:0]
}

// element parses one list element: its addresses in angle brackets, each named by
// the phrase before it; or, when it has none, the addr-specs found in it.
func (p *addrParser) element(toks []addrTok) {
	prev, open, last := 0, -1, -1
	for i, t := range toks {
		switch {
		case t.is('<'):
			open = i
		case t.is('>') && open >= 0:
			p.commentName(last, toks[prev:open])
			last = len(p.out)
			p.scan(toks[open+1 : i])
			if last < len(p.out) {
				p.out[last].Name = p.phrase(toks[prev:open])
			}
			prev, open = i+1, -1
		}
	}
	if last >= 0 {
		p.commentName(last, toks[prev:])
		return
	}
	first := len(p.out)
	p.scan(toks)
	for k := first; k < len(p.out); k++ {
		f := p.found[k-first]
		if k == first {
			p.out[k].Name = p.phrase(toks[:f.start])
		}
		next := len(toks)
		if k+1 < len(p.out) {
			next = p.found[k+1-first].start
		}
		p.commentName(k, toks[f.end:next])
	}
}

// scan appends the mailboxes of the addr-specs in toks (an obs-route first is
// skipped), and records their token ranges in p.found.
func (p *addrParser) scan(toks []addrTok) {
	p.found = p.found[:0]
	toks, skipped := addrStripRoute(toks)
	i := 0
	for i < len(toks) {
		if t := toks[i]; t.kind != addrAtom && t.kind != addrQuoted && !t.is('.') {
			i++
			continue
		}
		j, ok := addrLocalEnd(toks, i)
		k := addrSkipComments(toks, j)
		if !ok || k >= len(toks) || !toks[k].is('@') {
			i = j
			continue
		}
		e, ok := addrDomainEnd(toks, k+1)
		if !ok {
			i = k + 1
			continue
		}
		if p.emit(toks[i:j], toks[k+1:e]) {
			p.found = append(p.found, addrFound{skipped + i, skipped + e})
		}
		i = e
	}
}

// addrStripRoute removes an obs-route ("@a.example,@b.example:") from the start of
// the content of angle brackets, and says how many tokens it removed.
func addrStripRoute(toks []addrTok) ([]addrTok, int) {
	x := 0
	for x < len(toks) && (toks[x].kind == addrComment || toks[x].is(',')) {
		x++
	}
	if x < len(toks) && toks[x].is('@') {
		for y := x; y < len(toks); y++ {
			if toks[y].is(':') {
				return toks[y+1:], y + 1
			}
		}
	}
	return toks, 0
}

func addrSkipComments(toks []addrTok, i int) int {
	for i < len(toks) && toks[i].kind == addrComment {
		i++
	}
	return i
}

// addrLocalEnd reads a local part from toks[i]: words (atoms, quoted strings) and
// dots, comments between them skipped. Dots may be missing at the ends or doubled
// (seen in real mail); two words without a dot between end it. It returns the index
// after it (always more than i) and whether it has a word.
func addrLocalEnd(toks []addrTok, i int) (int, bool) {
	end, words, afterWord := i+1, 0, false
	for x := i; x < len(toks); x++ {
		t := toks[x]
		switch {
		case t.kind == addrComment:
		case t.kind == addrAtom || t.kind == addrQuoted:
			if afterWord {
				return end, words > 0
			}
			words, afterWord, end = words+1, true, x+1
		case t.is('.'):
			afterWord, end = false, x+1
		default:
			return end, words > 0
		}
	}
	return end, words > 0
}

// addrDomainEnd reads a domain from toks[i]: a domain literal, or atoms separated by
// dots with comments and white space around them (obs-domain), a final dot allowed.
func addrDomainEnd(toks []addrTok, i int) (int, bool) {
	x := addrSkipComments(toks, i)
	if x < len(toks) && toks[x].kind == addrLiteral {
		return x + 1, true
	}
	if x >= len(toks) || toks[x].kind != addrAtom {
		return x, false
	}
	end := x + 1
	for y := x + 1; y < len(toks); y++ {
		if toks[y].kind == addrComment {
			continue
		}
		if !toks[y].is('.') {
			break
		}
		z := addrSkipComments(toks, y+1)
		if z >= len(toks) || toks[z].kind != addrAtom {
			return y + 1, true
		}
		end, y = z+1, z
	}
	return end, true
}

// emit appends the mailbox of a local part and a domain, if it has a key.
func (p *addrParser) emit(local, domain []addrTok) bool {
	localText, localRaw := p.join(local)
	domainText, domainRaw := p.join(domain)
	literal := domain[addrSkipComments(domain, 0)].kind == addrLiteral
	key, err := p.key(localText, domainText, literal)
	if err != nil {
		p.err = err
		return false
	}
	written := localRaw + "@" + domainRaw
	if first, last := local[0], domain[len(domain)-1]; p.contiguous(local) && p.contiguous(domain) &&
		int(last.end-first.pos) == len(written) {
		written = p.lex.s[first.pos:last.end] // no comments, no white space: the substring
	}
	if strings.ContainsAny(written, "\r\n") {
		written = strings.NewReplacer("\r", "", "\n", "").Replace(written)
	}
	p.out = append(p.out, Mailbox{Key: key, Written: addrText(written)})
	return true
}

// contiguous reports whether toks follow each other in the value with nothing between,
// and none is a comment.
func (p *addrParser) contiguous(toks []addrTok) bool {
	for i := range toks {
		if toks[i].kind == addrComment || i > 0 && toks[i].pos != toks[i-1].end {
			return false
		}
	}
	return true
}

// join returns the text of the tokens of a local part or domain without comments:
// its meaning (quoted strings by their content) and as written (quoted strings with
// their quotes). It allocates only when the tokens are not one run of the value.
func (p *addrParser) join(toks []addrTok) (text, raw string) {
	quoted := false
	for _, t := range toks {
		quoted = quoted || t.kind == addrQuoted || t.kind == addrLiteral
	}
	if !quoted && p.contiguous(toks) {
		s := p.lex.s[toks[0].pos:toks[len(toks)-1].end]
		return s, s
	}
	var tb, rb strings.Builder
	for _, t := range toks {
		switch t.kind {
		case addrComment:
		case addrSpecial:
			tb.WriteByte(t.ch)
			rb.WriteByte(t.ch)
		case addrAtom:
			tb.WriteString(t.text)
			rb.WriteString(t.text)
		case addrQuoted, addrLiteral:
			tb.WriteString(t.text)
			rb.WriteString(p.lex.s[t.pos:t.end])
		}
	}
	return tb.String(), rb.String()
}
