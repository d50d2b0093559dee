package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"math/rand/v2"
	"mime"
	"mime/quotedprintable"
	"strings"
	"unicode"
	"unicode/utf8"
)

// lineWidth is where body lines are wrapped.
const lineWidth = 72

// render draws the text of m (its words go to m.words) and returns its raw bytes, with
// CRLF line ends.
func (g *generator) render(rng *rand.Rand, m *message) []byte {
	t := textDrawer{g: g, rng: rng, zipf: rand.NewZipf(rng, wordSkew, 1, vocabulary-1), m: m}
	subject := t.sentence(3+rng.IntN(6), false)
	if m.replyTo {
		subject = "Re: " + subject
	}
	body := t.body()
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\n", g.mailbox(m.sender), g.mailboxes(m.to))
	if len(m.cc) > 0 {
		fmt.Fprintf(&b, "Cc: %s\r\n", g.mailboxes(m.cc))
	}
	fmt.Fprintf(&b, "Subject: %s\r\nDate: %s\r\nMessage-ID: %s\r\nMIME-Version: 1.0\r\n",
		headerText(subject), m.sent.In(m.zone).Format("Mon, 02 Jan 2006 15:04:05 -0700"), messageID(m.i, g.domains[g.addrs[m.sender].domain]))
	switch m.shape {
	case shapePlain:
		writeTextPart(&b, body)
	case shapeAlternative:
		writeAlternative(&b, m.i, body)
	default:
		writeMixed(&b, rng, m, body)
	}
	return b.Bytes()
}

// messageID is the Message-ID of message i, which names it (see messageIndex).
func messageID(i int, domain string) string { return fmt.Sprintf("<%d.scalebench@%s>", i, domain) }

// mailbox renders address k with its display name, RFC 2047-encoded when not ASCII.
func (g *generator) mailbox(k int) string {
	a := g.addrs[k]
	if a.name == "" {
		return a.addr
	}
	return headerText(a.name) + " <" + a.addr + ">"
}

func (g *generator) mailboxes(ks []int) string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = g.mailbox(k)
	}
	return strings.Join(out, ", ")
}

// headerText encodes s as an RFC 2047 word when it is not ASCII.
func headerText(s string) string {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return mime.QEncoding.Encode("utf-8", s)
		}
	}
	return s
}

// textDrawer draws the words of one message.
type textDrawer struct {
	g    *generator
	rng  *rand.Rand
	zipf *rand.Zipf
	m    *message
}

// word returns a vocabulary word (recorded in m.words) or, one time in forty, an
// accented word.
func (t *textDrawer) word() string {
	if t.rng.IntN(40) == 0 {
		return accentedWords[t.rng.IntN(len(accentedWords))]
	}
	w := int32(t.zipf.Uint64())
	t.m.words = append(t.m.words, w)
	return t.g.words[w]
}

// sentence returns n words, the first capitalized, with a comma now and then and, when
// stop is set, a full stop or question mark at the end.
func (t *textDrawer) sentence(n int, stop bool) string {
	var b strings.Builder
	for k := range n {
		w := t.word()
		if k == 0 {
			r, size := utf8.DecodeRuneInString(w)
			w = string(unicode.ToUpper(r)) + w[size:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		if k < n-1 && t.rng.IntN(12) == 0 {
			b.WriteByte(',')
		}
	}
	if stop {
		b.WriteString([]string{".", ".", ".", ".", "?"}[t.rng.IntN(5)])
	}
	return b.String()
}

// paragraph returns two to five sentences of five to sixteen words.
func (t *textDrawer) paragraph() string {
	ss := make([]string, 2+t.rng.IntN(4))
	for i := range ss {
		ss[i] = t.sentence(5+t.rng.IntN(12), true)
	}
	return strings.Join(ss, " ")
}

// body returns the text: a greeting, for a reply a quoted paragraph, 75 to 300 words of
// paragraphs, a closing and a signature.
func (t *textDrawer) body() string {
	g, m := t.g, t.m
	var parts []string
	parts = append(parts, fmt.Sprintf(greetings[t.rng.IntN(len(greetings))], g.firstName(m.to[0])))
	if m.replyTo {
		parts = append(parts, g.firstName(m.to[0])+" wrote:\r\n"+quote(wrap(t.paragraph())))
	}
	want := 75 + t.rng.IntN(225)
	for start := len(m.words); len(m.words)-start < want; {
		parts = append(parts, wrap(t.paragraph()))
	}
	sender := g.addrs[m.sender]
	parts = append(parts, closings[t.rng.IntN(len(closings))]+"\r\n"+g.firstName(m.sender)+
		"\r\n-- \r\n"+cmpOr(sender.name, sender.addr)+"\r\n"+g.domains[sender.domain])
	return strings.Join(parts, "\r\n\r\n") + "\r\n"
}

// firstName is how a message greets address k: the first word of its display name, else
// its local part.
func (g *generator) firstName(k int) string {
	a := g.addrs[k]
	if first, _, ok := strings.Cut(a.name, " "); ok {
		return first
	}
	local, _, _ := strings.Cut(a.addr, "@")
	return local
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// wrap breaks text into lines of at most lineWidth bytes at spaces.
func wrap(text string) string {
	var b strings.Builder
	col := 0
	for i, w := range strings.Fields(text) {
		if i > 0 && col+1+len(w) > lineWidth {
			b.WriteString("\r\n")
			col = 0
		} else if i > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}

func quote(text string) string { return "> " + strings.ReplaceAll(text, "\r\n", "\r\n> ") }

func writeTextPart(b *bytes.Buffer, body string) {
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	b.WriteString(body)
}

// writeAlternative writes a multipart/alternative of the text and the same text as HTML,
// quoted-printable.
func writeAlternative(b *bytes.Buffer, i int, body string) {
	boundary := fmt.Sprintf("=_alt_%d", i)
	fmt.Fprintf(b, "Content-Type: multipart/alternative; boundary=\"%s\"\r\n\r\n--%s\r\n", boundary, boundary)
	writeTextPart(b, body)
	fmt.Fprintf(b, "\r\n--%s\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n", boundary)
	var h strings.Builder
	h.WriteString("<html><head><style>body { font-family: sans-serif; }</style></head><body>\r\n")
	for _, p := range strings.Split(strings.TrimSuffix(body, "\r\n"), "\r\n\r\n") {
		h.WriteString("<p>" + strings.ReplaceAll(html.EscapeString(p), "\r\n", "<br>\r\n") + "</p>\r\n")
	}
	h.WriteString("</body></html>\r\n")
	qp := quotedprintable.NewWriter(b)
	_, _ = qp.Write([]byte(h.String()))
	_ = qp.Close()
	fmt.Fprintf(b, "\r\n--%s--\r\n", boundary)
}

// writeMixed writes a multipart/mixed of the text (or an alternative) and a small text
// attachment, base64.
func writeMixed(b *bytes.Buffer, rng *rand.Rand, m *message, body string) {
	boundary := fmt.Sprintf("=_mixed_%d", m.i)
	fmt.Fprintf(b, "Content-Type: multipart/mixed; boundary=\"%s\"\r\n\r\n--%s\r\n", boundary, boundary)
	if m.shape == shapeBoth {
		writeAlternative(b, m.i, body)
	} else {
		writeTextPart(b, body)
	}
	names := []string{"report.csv", "notes.txt", "minutes.txt", "agenda.txt", "quarterly-summary.csv"}
	name := names[rng.IntN(len(names))]
	fmt.Fprintf(b, "\r\n--%s\r\nContent-Type: text/plain; charset=utf-8; name=\"%s\"\r\nContent-Disposition: attachment; filename=\"%s\"\r\nContent-Transfer-Encoding: base64\r\n\r\n",
		boundary, name, name)
	enc := base64.StdEncoding.EncodeToString([]byte(attachmentText(rng)))
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	fmt.Fprintf(b, "%s\r\n--%s--\r\n", enc, boundary)
}

// attachmentText is a small table of items, quantities and prices.
func attachmentText(rng *rand.Rand) string {
	var b strings.Builder
	b.WriteString("item,quantity,price\r\n")
	for range 5 + rng.IntN(16) {
		fmt.Fprintf(&b, "%s,%d,%d.%02d\r\n", attachmentWords[rng.IntN(len(attachmentWords))], 1+rng.IntN(50), rng.IntN(500), rng.IntN(100))
	}
	return b.String()
}
