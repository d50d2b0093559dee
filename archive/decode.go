package archive

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/jhillyerd/enmime/v2"
	"github.com/jhillyerd/enmime/v2/mediatype"

	"github.com/mailledger/mailledger/archive/charset"
)

// The parser reads the MIME tree with enmime's RawContent option and decodes each part here,
// in one pass over a byte slice: enmime's own decoding streams base64 through byte-at-a-time
// readers and runs a charset detector (gogs/chardet) on every text part, a large share of
// the import's CPU.
// What is decoded is what enmime decoded, with these deliberate differences: the declared
// charset is trusted (no detection), charset labels follow the WHATWG Encoding Standard
// (so ISO-8859-1 is read as windows-1252, as mail clients do), a text part whose transfer
// encoding is unknown is still read in its declared charset, and corrupt base64 keeps
// what can be decoded instead of dropping the part's content.

// decodeParts decodes, in place, the Content of every part of the tree that holds content
// (the leaves; multipart containers have none): transfer encoding first, then, for text/*
// parts, the declared charset into UTF-8. Problems become warnings on the part, which
// sortParts gathers. It also makes every part's file name valid UTF-8 (raw bytes read in
// the part's charset, else the message's, charsets, else windows-1252: archive/charset).
func decodeParts(root *enmime.Part, charsets []string) {
	_ = root.DepthMatchAll(func(p *enmime.Part) bool {
		if p.FirstChild == nil && p.Content != nil {
			decodePart(p)
		}
		fileNameToUTF8(p, charsets)
		p.ContentType = charset.Raw(p.ContentType)
		return false
	})
}

// fileNameToUTF8 makes p's file name valid UTF-8. When the header it came from holds raw
// 8-bit bytes, which the media type parser turned into U+FFFD, the name is read again from
// the header after its bytes are read in the part's charset, else the message's, else
// windows-1252.
func fileNameToUTF8(p *enmime.Part, charsets []string) {
	disposition, ctype := p.Header.Get("Content-Disposition"), p.Header.Get("Content-Type")
	if name, ok := extendedFileName(disposition, ctype); ok {
		p.FileName = name
		return
	}
	labels := append([]string{p.Charset}, charsets...)
	if utf8.ValidString(disposition) && utf8.ValidString(ctype) {
		if !utf8.ValidString(p.FileName) {
			p.FileName = charset.Raw(p.FileName, labels...)
		}
		return
	}
	var names []string
	if _, params, _, err := mediatype.Parse(charset.Raw(disposition, labels...)); err == nil {
		names = append(names, params["filename"])
	}
	if _, params, _, err := mediatype.Parse(charset.Raw(ctype, labels...)); err == nil {
		names = append(names, params["name"], params["file"])
	}
	for _, name := range names {
		if name != "" {
			p.FileName = charset.Header(name)
			return
		}
	}
	p.FileName = charset.Raw(p.FileName, labels...)
	if p.FileName == "" {
		p.FileName = charset.Raw(writtenFileName(disposition, ctype), labels...)
	}
}

// writtenFileName returns the file name of a Content-Disposition or Content-Type value as
// written, for a parameter the media type parser could not read (a broken RFC 2231
// continuation, an unclosed quote, a bad charset prefix): the segments of filename (else
// of name) in the order written, quotes removed, the charset'language' prefix of an
// extended value dropped and its %XX decoded where that decodes. "" when there is none.
func writtenFileName(values ...string) string {
	var filename, name strings.Builder
	for _, v := range values {
		_, params, _ := strings.Cut(v, ";")
		for _, param := range strings.Split(params, ";") {
			key, value, ok := strings.Cut(param, "=")
			if !ok {
				continue
			}
			key = strings.ToLower(strings.TrimSpace(key))
			base, ext, _ := strings.Cut(key, "*")
			value = strings.Trim(strings.TrimSpace(value), `"`)
			if ext != "" || strings.HasSuffix(key, "*") {
				value = extendedValue(value)
			}
			switch base {
			case "filename":
				filename.WriteString(value)
			case "name":
				name.WriteString(value)
			}
		}
	}
	if filename.Len() > 0 {
		return filename.String()
	}
	return name.String()
}

// extendedFileName decodes an RFC 2231 extended file name (filename*=, or its
// continuations filename*0*= …; else name*=) whose charset is neither UTF-8 nor US-ASCII,
// which the media type parser leaves undecoded: the %XX bytes of its segments, in order,
// read in the declared charset. ok is false when there is none or it does not decode.
func extendedFileName(values ...string) (name string, ok bool) {
	for _, want := range []string{"filename", "name"} {
		for _, v := range values {
			_, params, _ := strings.Cut(v, ";")
			label, raw, found := "", []byte(nil), false
			for _, param := range strings.Split(params, ";") {
				key, value, ok := strings.Cut(param, "=")
				key = strings.ToLower(strings.TrimSpace(key))
				base, rest, ext := strings.Cut(key, "*")
				if !ok || base != want || !ext {
					continue
				}
				value = strings.Trim(strings.TrimSpace(value), `"`)
				if !found { // the first segment names the charset
					parts := strings.SplitN(value, "'", 3)
					if len(parts) != 3 {
						return "", false
					}
					label, value, found = parts[0], parts[2], true
				}
				if strings.HasSuffix(rest, "*") || rest == "" { // an encoded segment
					decoded, err := url.PathUnescape(value)
					if err != nil {
						return "", false
					}
					value = decoded
				}
				raw = append(raw, value...)
			}
			if !found {
				continue
			}
			if l := strings.ToLower(label); l == "" || l == "utf-8" || l == "utf8" || l == "us-ascii" {
				return "", false
			}
			out, known, err := charset.Body(raw, label)
			if !known || err != nil {
				return "", false
			}
			return string(charset.Text(out)), true
		}
	}
	return "", false
}

// extendedValue reads an RFC 2231 extended value leniently: the charset'language' prefix
// dropped, %XX decoded; as written when it does not decode.
func extendedValue(v string) string {
	if parts := strings.SplitN(v, "'", 3); len(parts) == 3 {
		v = parts[2]
	}
	if decoded, err := url.PathUnescape(v); err == nil {
		return decoded
	}
	return v
}

func decodePart(p *enmime.Part) {
	cte := p.Header.Get("Content-Transfer-Encoding")
	switch strings.ToLower(cte) {
	case "base64":
		content, err := decodeBase64(p.Content)
		p.Content = content
		if err != nil {
			warn(p, enmime.ErrorMalformedBase64, err.Error())
		}
	case "quoted-printable":
		content, err := decodeQuotedPrintable(p.Content)
		p.Content = content
		if err != nil {
			warn(p, enmime.ErrorContentEncoding, err.Error())
		}
	case "7bit", "8bit", "binary", "":
	default:
		// An unknown encoding ("7-bit", "8-bit", "plain") leaves the bytes as they are;
		// they are still text in the declared charset (enmime would skip the charset too).
		warn(p, enmime.ErrorContentEncoding, fmt.Sprintf("Unrecognized Content-Transfer-Encoding type %q", cte))
	}
	if strings.HasPrefix(p.ContentType, "text/") {
		convertCharset(p)
	}
}

// replacesContent reports whether decodePart always replaces p's Content with bytes of its
// own (base64 and quoted-printable parts, even when corrupt), so that the splitter can hand
// it a slice of the message instead of a copy.
func replacesContent(p *enmime.Part) bool {
	switch strings.ToLower(p.Header.Get("Content-Transfer-Encoding")) {
	case "base64", "quoted-printable":
		return true
	}
	return false
}

func warn(p *enmime.Part, name, detail string) {
	p.Errors = append(p.Errors, &enmime.Error{Name: name, Detail: detail})
}

// base64Ignored are the bytes a base64 body may carry besides its alphabet without being
// corrupt: line breaks, folding white space and padding (which may also sit in the middle
// of bodies glued together from several encoded chunks).
const base64Ignored = "\r\n\t ="

// decodeBase64 decodes a base64 body leniently, in one call of encoding/base64: bytes
// outside the alphabet are dropped, missing padding is fine, and a truncated body decodes up
// to its last whole group. It returns what it could decode and, when the input was corrupt,
// an error saying so.
func decodeBase64(in []byte) ([]byte, error) {
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(in))) // room for unpadded input too
	if n, err := base64.StdEncoding.Decode(out, in); err == nil {
		return out[:n], nil // well-formed: only line breaks to skip, which Decode does
	}
	clean := make([]byte, 0, len(in))
	junk := 0
	for _, c := range in {
		switch {
		case isBase64Alphabet(c):
			clean = append(clean, c)
		case strings.IndexByte(base64Ignored, c) < 0:
			junk++
		}
	}
	var problems []string
	if junk > 0 {
		problems = append(problems, fmt.Sprintf("dropped %d bytes outside the base64 alphabet", junk))
	}
	// Decode returns what precedes an error; after cleaning, the only one left is a dangling
	// last character (a truncated body).
	n, err := base64.RawStdEncoding.Decode(out, clean)
	if err != nil {
		problems = append(problems, err.Error())
	}
	if problems != nil {
		return out[:n], errors.New(strings.Join(problems, "; "))
	}
	return out[:n], nil
}

func isBase64Alphabet(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/'
}

// decodeQuotedPrintable decodes with mime/quotedprintable after making the body acceptable
// to it the way enmime does (see qpClean). On a decoding error it returns what was decoded.
func decodeQuotedPrintable(in []byte) ([]byte, error) {
	out, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(qpClean(in))))
	if err != nil {
		return out, fmt.Errorf("quoted-printable: %w", err)
	}
	return out, nil
}

// qpMaxLine is the longest line qpClean lets through before it inserts a soft line break:
// mime/quotedprintable fails on lines longer than its 4 KiB buffer. Same value as enmime's.
const qpMaxLine = 1024

// qpClean does over a byte slice what enmime's internal QPCleaner (not importable) does over
// a reader, so that bodies decode exactly as they did: an "=" not starting an escape or a soft
// line break is escaped as "=3D", control and 8-bit bytes are escaped, and over-long lines
// get soft line breaks.
func qpClean(in []byte) []byte {
	const hex = "0123456789ABCDEF"
	out := make([]byte, 0, len(in)+len(in)/16)
	line := 0
	breakIfLong := func(need int) {
		if line+need >= qpMaxLine {
			out = append(out, "=\r\n"...)
			line = 0
		}
	}
	for i, b := range in {
		breakIfLong(0)
		switch {
		case b == '=':
			breakIfLong(2)
			if qpEscapeFollows(in[i+1:]) {
				out = append(out, b)
				line++
			} else {
				out = append(out, "=3D"...)
				line += 3
			}
		case b == '\r' || b == '\n':
			out = append(out, b)
			line = 0
		case b != '\t' && (b < ' ' || b > '~'):
			breakIfLong(2)
			out = append(out, '=', hex[b>>4], hex[b&0x0f])
			line += 3
		default:
			out = append(out, b)
			line++
		}
	}
	return out
}

// qpEscapeFollows reports whether the bytes after an "=" make it an escape or a soft break.
func qpEscapeFollows(rest []byte) bool {
	if len(rest) > 0 && rest[0] == '\n' {
		return true
	}
	if len(rest) < 2 {
		return false
	}
	return rest[0] == '\r' && rest[1] == '\n' || isHex(rest[0]) && isHex(rest[1])
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'A' <= b && b <= 'F' || 'a' <= b && b <= 'f'
}

// convertCharset turns a text part's Content from its declared charset into UTF-8. With no
// charset declared, or UTF-8 declared, the bytes stay as they are (a text/* attachment may
// be a mislabelled binary file); an unknown charset keeps them too and is reported. The
// message's text is made valid UTF-8 where it is put together (fromParts).
func convertCharset(p *enmime.Part) {
	if p.Charset == "" {
		return
	}
	out, known, err := charset.Body(p.Content, p.Charset)
	switch {
	case !known:
		warn(p, enmime.ErrorCharsetConversion, fmt.Sprintf("unsupported charset %q, text kept undecoded", p.Charset))
	case err != nil:
		warn(p, enmime.ErrorCharsetConversion, fmt.Sprintf("charset %q: %v", p.Charset, err))
	default:
		p.Content = out
	}
}
