package analyzer

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"
)

// MaxKeyBytes bounds the length of a key. SMTP limits a path to 256 octets; a longer
// "address" in a header is junk and is not returned, and Normalize refuses one.
const MaxKeyBytes = 512

// ErrInvalidAddress is the error of Normalize and NormalizeDomain; the error's text
// says why.
var ErrInvalidAddress = errors.New("invalid address")

// AddressError is an address or domain refused, with the reason.
type AddressError struct {
	Input  string
	Reason string
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("invalid address %q: %s", e.Input, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidAddress) true.
func (e *AddressError) Unwrap() error { return ErrInvalidAddress }

// addrIDNA maps domains as UTS #46 says for lookup, non-transitional (ß stays ß), to
// their ASCII form; it allows the "_" that DNS names carry in real mail.
var addrIDNA = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false))

// Normalize returns the match key of one address, as a request (an erasure, a hold, a
// search) gives it: the same key ParseList gives the address in a message. The key is:
//   - the local part by its meaning (quotes and quoted-pairs removed, obsolete dots with
//     comments joined), lower-cased with strings.ToLower (simple Unicode case mapping:
//     addresses are compared without regard to case, as every mail provider does) and
//     composed to Unicode NFC; written bare when it is a dot-atom, else quoted, so
//     `"john"@x` is `john@x` and `"john doe"@example.com` stays quoted;
//   - "@";
//   - the domain mapped by IDNA UTS #46 to its ASCII form (lower case, xn-- labels), so
//     the Unicode and the xn-- spellings of a domain are one, without a final dot; a
//     domain the mapping refuses is only lower-cased; a domain literal lower-cased.
//
// Normalize refuses, with an *AddressError that says why, anything but one address:
// an empty string, no "@" or no domain, no local part, a display name or angle
// brackets, a group, several addresses, text outside the address, an unclosed quote,
// comment or bracket, a key longer than MaxKeyBytes. Comments and white space that
// RFC 5322 allows inside an address are accepted. Normalize(key) == key for every key.
func Normalize(addr string) (string, error) {
	fail := func(reason string) (string, error) { return "", &AddressError{Input: addr, Reason: reason} }
	lex := addrLexer{s: addr}
	var toks []addrTok
	ats, words := 0, 0
	for t, ok := lex.next(); ok; t, ok = lex.next() {
		toks = append(toks, t)
		switch {
		case t.is('<') || t.is('>'):
			return fail("give the bare address, without a display name or angle brackets")
		case t.is(':'):
			return fail("a group is not an address")
		case t.is(',') || t.is(';'):
			return fail("more than one address")
		case t.is('@'):
			ats++
		case t.kind != addrComment:
			words++
		}
	}
	switch {
	case lex.unclosed:
		return fail("unclosed quoted string, comment or domain literal")
	case words == 0 && ats == 0:
		return fail("empty")
	case ats == 0:
		return fail("no domain (no @)")
	case ats > 1:
		return fail("more than one @ outside quotes (quote the local part)")
	}
	if reason := addrSides(toks); reason != "" {
		return fail(reason)
	}
	p := addrParser{lex: lex}
	p.scan(toks)
	if len(p.out) == 0 {
		if p.err != nil {
			return fail(p.err.Error())
		}
		return fail("not an address")
	}
	f := p.found[0]
	for i, t := range toks {
		if (i < f.start || i >= f.end) && t.kind != addrComment {
			return fail("text outside the address")
		}
	}
	return p.out[0].Key, nil
}

// addrSides says what is missing on either side of the one "@" of toks.
func addrSides(toks []addrTok) string {
	before, after, seen := false, false, false
	for _, t := range toks {
		switch {
		case t.is('@'):
			seen = true
		case t.kind == addrComment:
		case seen:
			after = true
		default:
			before = true
		}
	}
	switch {
	case !before:
		return "no local part"
	case !after:
		return "no domain"
	}
	return ""
}

// NormalizeDomain returns the key form of a domain, as a request for a domain hold or
// a "to=@domain" search gives it ("example.com", "@Bücher.example", "[192.0.2.1]"):
// the domain part of every key of that domain (see DomainOf).
func NormalizeDomain(domain string) (string, error) {
	fail := func(reason string) (string, error) { return "", &AddressError{Input: domain, Reason: reason} }
	s := strings.TrimPrefix(strings.TrimSpace(domain), "@")
	if s == "" {
		return fail("empty domain")
	}
	lex := addrLexer{s: s}
	var toks []addrTok
	for t, ok := lex.next(); ok; t, ok = lex.next() {
		if t.space || t.kind == addrComment || t.kind == addrQuoted || t.kind == addrSpecial && !t.is('.') {
			return fail("not a domain")
		}
		toks = append(toks, t)
	}
	if end, ok := addrDomainEnd(toks, 0); lex.unclosed || !ok || end != len(toks) {
		return fail("not a domain")
	}
	p := addrParser{lex: lex}
	text, _ := p.join(toks)
	key, err := p.domainKey(text, toks[0].kind == addrLiteral)
	if err != nil {
		return fail(err.Error())
	}
	return key, nil
}

// DomainOf returns the domain part of a key: what a domain hold or a "to=@domain"
// search compares with NormalizeDomain's result. It returns "" for a string without
// a domain.
func DomainOf(key string) string {
	i := 0
	if strings.HasPrefix(key, `"`) {
		for i = 1; i < len(key) && key[i] != '"'; i++ {
			if key[i] == '\\' {
				i++
			}
		}
	}
	if i >= len(key) {
		return ""
	}
	at := strings.IndexByte(key[i:], '@')
	if at < 0 {
		return ""
	}
	return key[i+at+1:]
}

// key returns the key of a local part and a domain, both by their meaning.
func (p *addrParser) key(local, domain string, literal bool) (string, error) {
	d, err := p.domainKey(domain, literal)
	if err != nil {
		return "", err
	}
	key := addrLocalKey(local) + "@" + d
	if len(key) > MaxKeyBytes {
		return "", fmt.Errorf("longer than %d bytes", MaxKeyBytes)
	}
	return key, nil
}

// addrLocalKey is the key form of a local part (see Normalize).
func addrLocalKey(local string) string {
	local = strings.ToLower(addrText(local))
	local = norm.NFC.String(local)
	if addrIsDotAtom(local) {
		return local
	}
	var b strings.Builder
	b.Grow(len(local) + 2)
	b.WriteByte('"')
	for i := 0; i < len(local); i++ {
		if local[i] == '"' || local[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(local[i])
	}
	b.WriteByte('"')
	return b.String()
}

// addrIsDotAtom reports whether s is atoms of atext (RFC 6532: UTF-8 included)
// separated by single dots.
func addrIsDotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && c != '.' && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0) {
			return false
		}
	}
	return true
}

// domainKey is the key form of a domain (see Normalize), remembered per parse.
func (p *addrParser) domainKey(domain string, literal bool) (string, error) {
	if literal {
		d := addrLowerASCII(addrText(domain))
		if d == "" || strings.ContainsAny(d, "[]\\") {
			return "", errors.New("invalid domain literal")
		}
		return "[" + d + "]", nil
	}
	if d, ok := p.domains[domain]; ok {
		if d == "" {
			return "", errors.New("invalid domain")
		}
		return d, nil
	}
	d := addrDomainKey(domain)
	if p.domains == nil {
		p.domains = map[string]string{}
	}
	p.domains[domain] = d
	if d == "" {
		return "", errors.New("invalid domain")
	}
	return d, nil
}

// addrDomainKey maps a domain to its key form, or "" when it cannot be one.
func addrDomainKey(domain string) string {
	d := strings.TrimSuffix(addrText(domain), ".")
	if addrIsASCII(d) && !strings.Contains(addrLowerASCII(d), "xn--") {
		d = addrLowerASCII(d) // what UTS #46 does to ASCII without the strict rules
	} else if a, err := addrIDNA.ToASCII(d); err == nil && addrValidDomain(a) {
		d = a
	} else {
		d = strings.ToLower(d)
	}
	if !addrValidDomain(d) {
		return ""
	}
	return d
}

// addrValidDomain reports whether d reads back as the same domain: non-empty labels of
// characters the lexer keeps in an atom.
func addrValidDomain(d string) bool {
	if d == "" || d[0] == '.' || d[len(d)-1] == '.' || strings.Contains(d, "..") {
		return false
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; c != '.' && (addrIsSpace(c) || addrIsSpecial(c) || strings.IndexByte(`()"[`, c) >= 0) {
			return false
		}
	}
	return true
}

func addrIsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
