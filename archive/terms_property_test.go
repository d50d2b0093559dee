package archive

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"mime"
	"mime/quotedprintable"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// propCharsets are the charsets a generated part may be written in, with the words each
// can carry.
var propCharsets = []struct {
	label string
	enc   encoding.Encoding // nil: UTF-8
	words []string
}{
	{"utf-8", nil, []string{"Zürich", "Ελληνικά", "Москва", "東京都", "naïve", "Øresund", "façade"}},
	{"iso-8859-1", charmap.Windows1252, []string{"Zürich", "naïve", "façade", "Øresund", "crème"}},
	{"windows-1252", charmap.Windows1252, []string{"Zürich", "œuvre", "naïve", "façade"}},
	{"koi8-r", charmap.KOI8R, []string{"Москва", "Привет"}},
	{"iso-8859-7", charmap.ISO8859_7, []string{"Ελληνικά", "Αθήνα"}},
	{"shift_jis", japanese.ShiftJIS, []string{"東京都", "テキスト"}},
}

// propPlaces are where a generated message carries its word.
var propPlaces = []string{"subject", "display name", "body", "html", "alternative html", "text attachment",
	"attached message", "file name", "headerless part", "deep multipart"}

// propMessage writes a message that carries word, written in cs, at place, with a random
// transfer encoding.
func propMessage(r *rand.Rand, i int, place, word, label string, enc encoding.Encoding) string {
	encodeText := func(s string) []byte {
		if enc == nil {
			return []byte(s)
		}
		b, err := enc.NewEncoder().Bytes([]byte(s))
		if err != nil {
			panic(err)
		}
		return b
	}
	part := func(ctype, extra, text string) string {
		raw := encodeText(text)
		var cte string
		var body []byte
		switch r.IntN(3) {
		case 0:
			cte, body = "8bit", raw
		case 1:
			var b bytes.Buffer
			w := quotedprintable.NewWriter(&b)
			_, _ = w.Write(raw)
			_ = w.Close()
			cte, body = "quoted-printable", b.Bytes()
		default:
			cte, body = "base64", []byte(base64.StdEncoding.EncodeToString(raw))
		}
		return fmt.Sprintf("Content-Type: %s; charset=%s%s\nContent-Transfer-Encoding: %s\n\n%s\n", ctype, label, extra, cte, body)
	}
	subject := fmt.Sprintf("message %d", i)
	from := "sender@prop.test"
	var body string
	text := "some words before " + word + " and after"
	switch place {
	case "subject":
		subject = mime.QEncoding.Encode("utf-8", "about "+word)
		if r.IntN(2) == 0 {
			subject = mime.BEncoding.Encode("utf-8", "about "+word)
		}
		body = "Content-Type: text/plain\n\nplain text\n"
	case "display name":
		from = mime.BEncoding.Encode("utf-8", word+" Person") + " <sender@prop.test>"
		body = "Content-Type: text/plain\n\nplain text\n"
	case "body":
		body = part("text/plain", "", text)
	case "html":
		body = part("text/html", "", "<html><body><p class=\"x\">"+text+"</p></body></html>")
	case "alternative html":
		body = "Content-Type: multipart/alternative; boundary=\"a\"\n\n--a\n" + part("text/plain", "", "the plain part") +
			"--a\n" + part("text/html", "", "<div>"+text+"</div>") + "--a--\n"
	case "text attachment":
		body = "Content-Type: multipart/mixed; boundary=\"m\"\n\n--m\nContent-Type: text/plain\n\nsee the file\n--m\n" +
			part("text/plain", "; name=\"notes.txt\"\nContent-Disposition: attachment; filename=\"notes.txt\"", text) + "--m--\n"
	case "attached message":
		inner := "From: inner@prop.test\nSubject: inner\nMIME-Version: 1.0\n" + part("text/plain", "", text)
		body = "Content-Type: multipart/mixed; boundary=\"m\"\n\n--m\nContent-Type: text/plain\n\nforwarded\n--m\nContent-Type: message/rfc822\n\n" +
			inner + "--m--\n"
	case "file name":
		name := url.PathEscape(string(encodeText(word + ".pdf")))
		body = "Content-Type: multipart/mixed; boundary=\"m\"\n\n--m\nContent-Type: text/plain\n\nattached\n--m\n" +
			"Content-Type: application/octet-stream\nContent-Disposition: attachment; filename*=" + label + "''" + name +
			"\nContent-Transfer-Encoding: base64\n\nAAEC\n--m--\n"
	case "headerless part":
		body = "Content-Type: multipart/mixed; boundary=\"m\"\n\n--m\n\n" + text + "\n--m--\n"
	case "deep multipart":
		body = "Content-Type: multipart/mixed; boundary=\"m1\"\n\n--m1\nContent-Type: multipart/related; boundary=\"m2\"\n\n--m2\n" +
			"Content-Type: multipart/alternative; boundary=\"m3\"\n\n--m3\n" + part("text/plain", "", "plain") +
			"--m3\n" + part("text/html", "", "<p>"+text+"</p>") + "--m3--\n--m2--\n--m1--\n"
	}
	return fmt.Sprintf("From: %s\nTo: r@prop.test\nSubject: %s\nDate: Mon, 2 Mar 2026 10:00:00 +0000\nMIME-Version: 1.0\n%s",
		from, subject, body)
}

// TestPropertyWordInAnyPartIsFound: a word written in any of the searched places of a
// message, in any charset that can hold it and any transfer encoding, is among the
// message's terms, and a search for it finds the message.
func TestPropertyWordInAnyPartIsFound(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2026))
	arc, _ := newSearchArchive(t, database.SQLite)
	p := NewParser("")
	type sample struct{ raw, word, desc string }
	var samples []sample
	for i := range 300 {
		cs := propCharsets[r.IntN(len(propCharsets))]
		word := cs.words[r.IntN(len(cs.words))]
		place := propPlaces[r.IntN(len(propPlaces))]
		raw := propMessage(r, i, place, word, cs.label, cs.enc)
		samples = append(samples, sample{raw, word, fmt.Sprintf("%d: %q in the %s, %s", i, word, place, cs.label)})
	}
	raws := make([][]byte, len(samples))
	for i, s := range samples {
		raws[i] = []byte(s.raw)
		msg, err := p.Parse(raws[i])
		require.NoError(t, err, s.desc)
		for _, term := range analyzer.AppendTerms(nil, s.word) {
			if !assert.True(t, slices.Contains(msg.Terms, term), "%s: term %q not in %q\n%s", s.desc, term, msg.Terms, s.raw) {
				break
			}
		}
	}
	res := commitRaw(t, arc, "default", raws...)
	for i, s := range samples {
		ids := searchIDs(t, arc, Query{Tenant: "default", Text: s.word, Limit: 500})
		assert.Contains(t, ids, res[i].ID, s.desc)
		if strings.Contains(s.desc, "file name") {
			assert.Contains(t, searchIDs(t, arc, Query{Tenant: "default", Text: s.word + ".pdf", Limit: 500}), res[i].ID, s.desc)
		}
	}
}
