package handlers_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"strings"
	"unicode/utf8"

	"github.com/jhillyerd/enmime/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
	xunicode "golang.org/x/text/encoding/unicode"
)

// The texts of a corpus message for corpus_words_test.go, read without the archive: the
// part tree from enmime (github.com/jhillyerd/enmime/v2) with its contents as written,
// transfer encodings and charsets decoded here as docs/search-rules.md says, HTML reduced
// to its visible text with golang.org/x/net/html's tokenizer.

// maxAttached bounds how deep attached messages are read for queries.
const maxAttached = 3

// wordsParser reads the part tree with enmime, its contents left as written: content
// decodes the transfer encoding and readText the charset as docs/search-rules.md says
// (enmime would guess an undeclared charset with chardet, which the rules do not).
var wordsParser = enmime.NewParser(enmime.RawContent(true))

// messageTexts returns the texts of a message as enmime splits it: the header's subject
// and From, To and Cc names and addresses (top level only), every text part (text/plain
// as text, text/html as visible text), every file name, and the subject and texts of
// attached messages; notes says what could not be read.
func messageTexts(content []byte, depth int) (texts []corpusText, notes []string) {
	root, err := wordsParser.ReadParts(bytes.NewReader(content))
	if err != nil {
		return nil, []string{fmt.Sprintf("enmime cannot read it: %v", err)}
	}
	prefix := strings.Repeat("attached ", depth)
	add := func(source, text string) {
		if strings.TrimSpace(text) != "" {
			texts = append(texts, corpusText{prefix + source, text})
		}
	}
	declared := root.Charset
	add("subject", headerText(root.Header.Get("Subject"), declared))
	if depth == 0 {
		for _, field := range []string{"From", "To", "Cc"} {
			raw := root.Header.Get(field)
			if raw == "" {
				continue
			}
			list, err := enmime.ParseAddressList(readRaw(raw, declared))
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s not read by enmime: %v", field, err))
			}
			for _, a := range list {
				add(strings.ToLower(field)+" name", a.Name)
				add(strings.ToLower(field)+" address", a.Address)
			}
		}
	}
	_ = root.DepthMatchAll(func(p *enmime.Part) bool {
		add("file name", p.FileName)
		switch {
		case p.FirstChild != nil:
		case p.ContentType == "text/html":
			add("html", visibleText(readText(partContent(p), p.Charset), 0))
		case p.ContentType == "text/plain":
			add("text", readText(partContent(p), p.Charset))
		case p.ContentType == "message/rfc822" && depth < maxAttached:
			sub, subNotes := messageTexts(partContent(p), depth+1)
			texts, notes = append(texts, sub...), append(notes, subNotes...)
		}
		return false
	})
	return texts, notes
}

// partContent returns a part's content with its transfer encoding decoded, leniently: base64
// without the characters that are not base64, quoted-printable up to a broken sequence
// (the rest as written); any other encoding as written.
func partContent(p *enmime.Part) []byte {
	switch strings.ToLower(strings.TrimSpace(p.Header.Get("Content-Transfer-Encoding"))) {
	case "base64":
		clean := bytes.Map(func(r rune) rune {
			if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' {
				return r
			}
			return -1
		}, p.Content)
		if len(clean)%4 == 1 {
			clean = clean[:len(clean)-1]
		}
		out, _ := base64.RawStdEncoding.DecodeString(string(clean))
		return out
	case "quoted-printable":
		r := quotedprintable.NewReader(bytes.NewReader(p.Content))
		var out bytes.Buffer
		if _, err := io.Copy(&out, r); err != nil {
			return p.Content
		}
		return out.Bytes()
	}
	return p.Content
}

// readText decodes a text part's bytes by docs/search-rules.md ("8-bit text without a
// declared charset"): undeclared, unknown, US-ASCII and the WHATWG replacement labels
// read as UTF-8 when valid, else windows-1252; UTF-8 keeps its valid sequences and reads
// each stray byte as windows-1252; other labels as WHATWG names them, else by IANA name.
func readText(b []byte, label string) string {
	enc := labelled(label)
	switch {
	case enc == nil && utf8.Valid(b):
		return string(b)
	case enc == nil:
		return windows1252(b)
	case enc == xunicode.UTF8:
		return utf8WithStrays(b)
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return windows1252(b)
	}
	return string(out)
}

// labelled returns the encoding a charset label names, nil for undeclared text.
func labelled(label string) encoding.Encoding {
	label = strings.ToLower(strings.TrimSpace(label))
	if label == "" || label == "us-ascii" || label == "ascii" {
		return nil
	}
	if enc, err := htmlindex.Get(label); err == nil {
		if enc == encoding.Replacement {
			return nil
		}
		return enc
	}
	if enc, err := ianaindex.IANA.Encoding(label); err == nil && enc != nil {
		return enc
	}
	return nil
}

func windows1252(b []byte) string {
	out, _ := charmap.Windows1252.NewDecoder().Bytes(b)
	return string(out)
}

// utf8WithStrays keeps b's valid UTF-8 and reads every other byte as windows-1252.
func utf8WithStrays(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			sb.WriteString(windows1252(b[:1]))
			b = b[1:]
			continue
		}
		sb.WriteRune(r)
		b = b[n:]
	}
	return sb.String()
}

// readRaw reads a header value's raw 8-bit bytes: UTF-8 when valid, else in the
// message's declared charset, else windows-1252 (docs/address-rule.md).
func readRaw(v, declared string) string {
	if utf8.ValidString(v) {
		return v
	}
	if enc := labelled(declared); enc != nil && enc != xunicode.UTF8 {
		if out, err := enc.NewDecoder().String(v); err == nil {
			return out
		}
	}
	return windows1252([]byte(v))
}

// headerText decodes a header value: raw bytes by readRaw, then RFC 2047 encoded words in
// any charset readText knows.
func headerText(v, declared string) string {
	dec := mime.WordDecoder{CharsetReader: func(label string, r io.Reader) (io.Reader, error) {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		return strings.NewReader(readText(b, label)), nil
	}}
	v = readRaw(v, declared)
	if out, err := dec.DecodeHeader(v); err == nil {
		return out
	}
	return v
}

// altText returns the alt attribute of the tag just read.
func altText(z *html.Tokenizer) string {
	for {
		key, val, more := z.TagAttr()
		if string(key) == "alt" {
			return string(val)
		}
		if !more {
			return ""
		}
	}
}

// inlineTags are the HTML elements that do not separate words (phrasing content that is
// not replaced or embedded): wo<b>r</b>d is one word; every other tag separates.
var inlineTags = map[atom.Atom]bool{
	atom.A: true, atom.Abbr: true, atom.B: true, atom.Bdi: true, atom.Bdo: true, atom.Big: true,
	atom.Cite: true, atom.Code: true, atom.Data: true, atom.Del: true, atom.Dfn: true, atom.Em: true,
	atom.Font: true, atom.I: true, atom.Ins: true, atom.Kbd: true, atom.Label: true, atom.Mark: true,
	atom.Nobr: true, atom.Q: true, atom.S: true, atom.Samp: true, atom.Small: true, atom.Span: true,
	atom.Strike: true, atom.Strong: true, atom.Sub: true, atom.Sup: true, atom.Time: true, atom.Tt: true,
	atom.U: true, atom.Var: true,
}

// visibleText returns the text nodes of an HTML document and the alt text of its images,
// without the contents of script, style and template; the markup that noscript, noembed,
// noframes and iframe hold as raw text is read once more (docs/search-rules.md, "HTML").
func visibleText(src string, depth int) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(src))
	var open atom.Atom
	template := 0
	for {
		switch tt := z.Next(); tt {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			switch {
			case template > 0 || open == atom.Script || open == atom.Style:
			case open == atom.Noscript || open == atom.Noembed || open == atom.Noframes || open == atom.Iframe:
				if depth == 0 {
					b.WriteString(" " + visibleText(string(z.Raw()), depth+1) + " ")
				}
			default:
				b.Write(z.Text())
			}
			open = 0
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if a == atom.Template && tt == html.StartTagToken {
				template++
			} else if a == atom.Template && tt == html.EndTagToken && template > 0 {
				template--
			}
			if !inlineTags[a] {
				b.WriteByte(' ')
			}
			if a == atom.Img && hasAttr && template == 0 {
				b.WriteString(altText(z) + " ")
			}
			open = 0
			if tt == html.StartTagToken {
				open = a
			}
		default:
			open = 0
		}
	}
}
