package analyzer

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
)

// Decode8bit returns text whose charset was declared as declaredCharset (empty when none
// was) as UTF-8:
//
//  1. Undeclared text is UTF-8 when it is valid UTF-8, else windows-1252 (the superset
//     of ISO-8859-1 that mail clients read it as).
//  2. A label that names no charset this reader knows, or one that decodes nothing (the
//     WHATWG "replacement" labels), is read as undeclared; so is US-ASCII, since 8-bit
//     bytes under it are someone's undeclared charset.
//  3. Declared UTF-8 keeps its valid sequences and reads each stray byte as
//     windows-1252, rather than losing the whole text's accents to one bad byte.
//  4. Other labels are read as WHATWG names them (ISO-8859-1 as windows-1252), then by
//     their IANA name.
func Decode8bit(b []byte, declaredCharset string) string {
	label := strings.ToLower(strings.Trim(declaredCharset, " \t\r\n\"'"))
	switch {
	case label == "utf-8" || label == "utf8":
		return wordDecodeMixed(b)
	case wordIsASCIILabel(label):
		return wordUndeclared(b)
	}
	enc := wordEncoding(label)
	if enc == nil {
		return wordUndeclared(b)
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return wordUndeclared(b)
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}

// wordEncoding returns the encoding a label names, or nil.
func wordEncoding(label string) encoding.Encoding {
	if label == "" {
		return nil
	}
	if enc, err := htmlindex.Get(label); err == nil {
		if name, _ := htmlindex.Name(enc); name == "replacement" {
			return nil
		}
		return enc
	}
	if enc, err := ianaindex.MIME.Encoding(label); err == nil && enc != nil {
		return enc
	}
	return nil
}

func wordIsASCIILabel(label string) bool {
	switch label {
	case "us-ascii", "ascii", "us", "ansi_x3.4-1968", "iso646-us", "iso-ir-6", "ibm367", "cp367", "csascii", "646":
		return true
	}
	return false
}

// wordUndeclared reads undeclared text: UTF-8 when valid, else windows-1252.
func wordUndeclared(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return wordWindows1252(b)
}

func wordWindows1252(b []byte) string {
	out := make([]byte, 0, len(b)+len(b)/2)
	for _, c := range b {
		out = utf8.AppendRune(out, charmap.Windows1252.DecodeByte(c))
	}
	return string(out)
}

// wordDecodeMixed reads UTF-8, each byte that starts no valid sequence as windows-1252.
func wordDecodeMixed(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			r = charmap.Windows1252.DecodeByte(b[0])
		}
		out = utf8.AppendRune(out, r)
		b = b[n:]
	}
	return string(out)
}
