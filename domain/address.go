package domain

import "strings"

// MaxAddressBytes bounds an address in a command, as the address rule bounds a key.
const MaxAddressBytes = 512

// ValidAddress reports whether s is one bare address in the form the address rule
// (docs/address-rule.md) writes a key: a local part that is a dot-atom or a quoted
// string, "@", and a domain that is dot-separated labels or a domain literal, with no
// display name, angle brackets, comments, white space outside quotes or control
// characters. UTF-8 is allowed (RFC 6532). The application turns what a user types into
// this form first (analyzer.Normalize, which reads every form RFC 5322 allows); the
// domain only checks the result, with the standard library alone.
func ValidAddress(s string) bool {
	if len(s) == 0 || len(s) > MaxAddressBytes {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return false
	}
	local, domainPart := s[:at], s[at+1:]
	if !validLocal(local) {
		return false
	}
	if strings.HasPrefix(domainPart, "[") && strings.HasSuffix(domainPart, "]") {
		return !strings.ContainsAny(domainPart[1:len(domainPart)-1], "[]\\") && !hasControl(domainPart)
	}
	return validDotAtom(domainPart)
}

// validLocal accepts a dot-atom or a quoted string (quoted pairs inside).
func validLocal(s string) bool {
	if len(s) < 2 || s[0] != '"' {
		return validDotAtom(s)
	}
	if s[len(s)-1] != '"' || hasControl(s) {
		return false
	}
	inner := s[1 : len(s)-1]
	for i := 0; i < len(inner); i++ {
		switch inner[i] {
		case '\\':
			i++
			if i == len(inner) {
				return false
			}
		case '"':
			return false
		}
	}
	return true
}

// validDotAtom accepts atoms of atext (and UTF-8) joined by single dots.
func validDotAtom(s string) bool {
	for _, atom := range strings.Split(s, ".") {
		if atom == "" || strings.ContainsAny(atom, "()<>[]:;@\\,\" ") || hasControl(atom) {
			return false
		}
	}
	return true
}

// hasControl reports whether s holds an ASCII control character or DEL.
func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0
}
