// Package charset turns the text of a message into UTF-8: the one place where charset
// labels are looked up and where raw header bytes, encoded words and text bodies are
// decoded. The parser (archive/parse.go) decodes every header value, file name and text
// part through it, so that what the archive stores and writes is always valid UTF-8.
//
// Rules:
//  1. Labels follow the WHATWG Encoding Standard (what browsers and mail clients accept, so
//     ISO-8859-1 is read as windows-1252), then IANA names it lacks (IBM850, …), then UTF-7.
//  2. Raw header bytes (8-bit bytes outside any encoded word) stay as they are when they are
//     valid UTF-8; else they are read in the first declared charset that keeps ASCII as
//     ASCII (the part's, then the message's); else as windows-1252, what mail readers do.
//  3. Whatever comes out is valid UTF-8: bytes no charset can read become U+FFFD.
package charset

import (
	"io"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/cention-sany/utf7"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
)

// Fallback is the charset of raw header bytes that are not UTF-8 and declare none.
var Fallback encoding.Encoding = charmap.Windows1252

// Lookup finds a charset by its label (rule 1); nil for labels nobody knows.
func Lookup(label string) encoding.Encoding {
	label = strings.TrimSpace(label)
	if label == "" {
		return nil
	}
	if enc, err := htmlindex.Get(label); err == nil {
		return enc
	}
	if enc, err := ianaindex.IANA.Encoding(label); err == nil && enc != nil {
		return enc
	}
	if l := strings.ToLower(label); l == "utf-7" || l == "utf7" {
		return utf7.UTF7
	}
	return nil
}

// IsUTF8 reports whether enc is UTF-8 (nothing to convert).
func IsUTF8(enc encoding.Encoding) bool { return enc == unicode.UTF8 }

// asciiProbe holds the ASCII a header is built of, but for \\ and ~, which some Japanese and
// Korean charsets read as ¥, ₩ or ‾.
const asciiProbe = "Subject: =?utf-8?q?A_z?= 09 <a@b.c>, \"x\"; (y) !#$%&'*+-./[]^`{|}\t"

// asciiCompatible says whether enc reads ASCII bytes as ASCII, which a header's raw bytes
// need (its names, separators and encoded words are ASCII): not UTF-16, UTF-32, UTF-7 or
// WHATWG's replacement encoding.
func asciiCompatible(enc encoding.Encoding) bool {
	if enc == nil {
		return false
	}
	out, err := enc.NewDecoder().String(asciiProbe)
	return err == nil && out == asciiProbe
}

// Raw returns s as UTF-8 (rule 2): s itself when it is valid UTF-8, else s read in the
// first of labels that names an ASCII-compatible charset, else in Fallback.
func Raw(s string, labels ...string) string {
	if utf8.ValidString(s) {
		return s
	}
	for _, label := range labels {
		if enc := Lookup(label); asciiCompatible(enc) && !IsUTF8(enc) {
			if out, err := enc.NewDecoder().String(s); err == nil {
				return strings.ToValidUTF8(out, "\uFFFD")
			}
		}
	}
	out, err := Fallback.NewDecoder().String(s)
	if err != nil {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return out
}

// Header decodes a header value: raw bytes as Raw does, then RFC 2047 encoded words in the
// charsets they name. An encoded word that cannot be decoded stays as it is.
func Header(s string, labels ...string) string {
	s = Raw(s, labels...)
	if !strings.Contains(s, "=?") {
		return s
	}
	out, err := WordDecoder().DecodeHeader(s)
	if err != nil {
		return s
	}
	return strings.ToValidUTF8(out, "\uFFFD")
}

// WordDecoder returns a decoder of RFC 2047 encoded words that knows every charset Lookup
// knows.
func WordDecoder() *mime.WordDecoder {
	return &mime.WordDecoder{CharsetReader: func(label string, in io.Reader) (io.Reader, error) {
		enc := Lookup(label)
		if enc == nil {
			return nil, errUnknown{label}
		}
		return enc.NewDecoder().Reader(in), nil
	}}
}

type errUnknown struct{ label string }

func (e errUnknown) Error() string { return "unknown charset " + e.label }

// Body converts a text body from the charset label names into UTF-8. It returns b
// unchanged, and a nil error, for UTF-8 itself; ok is false for a label nobody knows.
// US-ASCII declares nothing about 8-bit bytes (many mailers declare it for any text): a
// body so labelled is read as undeclared (Text: UTF-8 when valid, else Fallback).
//
// Declared UTF-8 keeps its valid sequences and reads each stray byte as Fallback, rather
// than losing the whole text's accents to one bad byte; a label that decodes nothing (the
// WHATWG "replacement" labels) is read as undeclared.
func Body(b []byte, label string) (out []byte, ok bool, err error) {
	if isASCIILabel(label) {
		return Text(b), true, nil
	}
	enc := Lookup(label)
	switch {
	case enc == nil:
		return b, false, nil
	case IsUTF8(enc):
		return mixedUTF8(b), true, nil
	case isReplacement(enc):
		return Text(b), true, nil
	}
	out, err = enc.NewDecoder().Bytes(b)
	if err != nil {
		return b, true, err
	}
	return out, true, nil
}

// isReplacement reports whether enc is WHATWG's replacement encoding, which decodes any
// text into one U+FFFD.
func isReplacement(enc encoding.Encoding) bool {
	name, err := htmlindex.Name(enc)
	return err == nil && name == "replacement"
}

// mixedUTF8 reads b as UTF-8, each byte that starts no valid sequence as windows-1252.
func mixedUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
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
	return out
}

// isASCIILabel reports whether label is one of US-ASCII's names (IANA's aliases).
func isASCIILabel(label string) bool {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "us-ascii", "ascii", "us", "ansi_x3.4-1968", "ansi_x3.4-1986", "iso646-us", "iso_646.irv:1991",
		"iso-ir-6", "ibm367", "cp367", "csascii", "646":
		return true
	}
	return false
}

// Text returns b as valid UTF-8 text: b itself when it is valid, else read as Fallback
// (text that declared no charset, or UTF-8 and is not).
func Text(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out, err := Fallback.NewDecoder().Bytes(b)
	if err != nil {
		return []byte(strings.ToValidUTF8(string(b), "\uFFFD"))
	}
	return out
}
