package archive_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/htmlindex"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
)

// TestParseAttachmentsMatchStdlib checks every attachment the parser finds in the corpus
// against an independent decode of the message with the standard library (mime/multipart,
// encoding/base64, mime/quotedprintable): each attachment's content must be the content of
// one of the message's parts. Messages the standard library cannot walk or decode (broken on
// purpose, most of them) are left out, and the test insists that most attachments are checked.
func TestParseAttachmentsMatchStdlib(t *testing.T) {
	p := archive.NewParser("")
	checked, total := 0, 0
	for _, path := range archivetest.CorpusFiles(t) {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		msg, err := p.Parse(raw)
		if err != nil {
			continue
		}
		name := filepath.Base(path)
		for _, a := range msg.Attachments {
			assert.Equal(t, len(a.Content), a.Size, "%s: %s", name, a.Name)
			assert.Equal(t, sha256.Sum256(a.Content), a.Digest, "%s: %s", name, a.Name)
		}
		total += len(msg.Attachments)
		parts, err := stdlibParts(raw)
		if err != nil {
			t.Logf("%s: not checked, the standard library cannot read it: %v", name, err)
			continue
		}
		for _, a := range msg.Attachments {
			i := indexOf(parts, a.Content)
			if assert.GreaterOrEqual(t, i, 0, "%s: attachment %d %q (%s, %d bytes) is no part of the message as the standard library decodes it",
				name, a.Seq, a.Name, a.Type, a.Size) {
				parts = append(parts[:i], parts[i+1:]...) // each part backs one attachment
				checked++
			}
		}
	}
	t.Logf("%d of %d corpus attachments checked against the standard library", checked, total)
	assert.GreaterOrEqual(t, checked, 30, "the corpus has 45 attachments; most must be checked")
}

func indexOf(parts [][]byte, content []byte) int {
	for i, p := range parts {
		if bytes.Equal(p, content) {
			return i
		}
	}
	return -1
}

// stdlibParts returns the decoded content of every non-multipart part of raw, read with the
// standard library only. Text parts that declare a charset other than UTF-8 are converted to
// UTF-8 (as the archive stores them) with golang.org/x/text's WHATWG index.
func stdlibParts(raw []byte) ([][]byte, error) {
	if bytes.HasPrefix(raw, []byte("From ")) {
		_, raw, _ = bytes.Cut(raw, []byte("\n"))
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return stdlibWalk(textproto.MIMEHeader(m.Header), m.Body)
}

func stdlibWalk(h textproto.MIMEHeader, body io.Reader) ([][]byte, error) {
	ctype := h.Get("Content-Type")
	if ctype == "" {
		ctype = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return nil, fmt.Errorf("content-type %q: %w", ctype, err)
	}
	if !strings.HasPrefix(mt, "multipart/") {
		content, err := stdlibDecode(h.Get("Content-Transfer-Encoding"), body)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(mt, "text/") && params["charset"] != "" {
			if content, err = toUTF8(params["charset"], content); err != nil {
				return nil, err
			}
		}
		return [][]byte{content}, nil
	}
	r := multipart.NewReader(body, params["boundary"])
	var out [][]byte
	for {
		part, err := r.NextRawPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("multipart: %w", err)
		}
		sub, err := stdlibWalk(part.Header, part)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
}

func stdlibDecode(cte string, r io.Reader) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "base64":
		raw, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		// encoding/base64 skips line breaks itself; folding blanks are trimmed per line.
		var lines []string
		for _, l := range strings.Split(string(raw), "\n") {
			lines = append(lines, strings.TrimSpace(l))
		}
		return base64.StdEncoding.DecodeString(strings.Join(lines, ""))
	case "quoted-printable":
		return io.ReadAll(quotedprintable.NewReader(r))
	case "", "7bit", "8bit", "binary":
		return io.ReadAll(r)
	default:
		return nil, fmt.Errorf("transfer encoding %q", cte)
	}
}

func toUTF8(label string, b []byte) ([]byte, error) {
	enc, err := htmlindex.Get(label)
	if err != nil {
		return nil, err
	}
	if name, _ := htmlindex.Name(enc); name == "utf-8" {
		return b, nil
	}
	return enc.NewDecoder().Bytes(b)
}

// mimeMessage builds a message of one part with the given headers and body.
func mimeMessage(contentType, cte, body string) []byte {
	return []byte("From: a@x.test\r\nTo: b@y.test\r\nSubject: t\r\nMIME-Version: 1.0\r\nContent-Type: " + contentType +
		"\r\nContent-Transfer-Encoding: " + cte + "\r\n\r\n" + body)
}

// withAttachment builds a multipart message whose attachment has the given encoded body.
func withAttachment(cte, encoded string) []byte {
	return []byte("From: a@x.test\r\nTo: b@y.test\r\nSubject: t\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"B\"\r\n\r\n--B\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nbody\r\n" +
		"--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"f.bin\"\r\n" +
		"Content-Transfer-Encoding: " + cte + "\r\n\r\n" + encoded + "\r\n--B--\r\n")
}

// wrap breaks s into lines of n characters joined by sep.
func wrap(s string, n int, sep string) string {
	var lines []string
	for len(s) > n {
		lines, s = append(lines, s[:n]), s[n:]
	}
	return strings.Join(append(lines, s), sep)
}

func hasWarning(m *archive.Parsed, part string) bool {
	for _, w := range m.Warnings {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

func TestParseBase64(t *testing.T) {
	content := make([]byte, 3000)
	for i := range content {
		content[i] = byte(i * 7)
	}
	std := base64.StdEncoding.EncodeToString(content)
	cases := []struct {
		name    string
		encoded string
		want    []byte
		warning bool
	}{
		{"CRLF every 76 characters", wrap(std, 76, "\r\n"), content, false},
		{"LF every 64 characters", wrap(std, 64, "\n"), content, false},
		{"missing padding", wrap(base64.RawStdEncoding.EncodeToString(content[:3000-2]), 76, "\r\n"), content[:3000-2], false},
		{"folding blanks", wrap(std, 76, " \t\r\n "), content, false},
		{"junk characters", strings.Replace(wrap(std, 76, "\r\n"), "\r\n", "!\r\n.", 5), content, true},
		{"non-ASCII junk", "\xc3\xa9" + wrap(std, 76, "\r\n"), content, true},
		{"dangling last character", wrap(std, 76, "\r\n") + "\r\nQ", content, true},
	}
	p := archive.NewParser("")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := p.Parse(withAttachment("base64", c.encoded))
			require.NoError(t, err)
			require.Len(t, m.Attachments, 1)
			a := m.Attachments[0]
			assert.Equal(t, "f.bin", a.Name)
			assert.True(t, bytes.Equal(c.want, a.Content), "decoded %d bytes, want %d", len(a.Content), len(c.want))
			assert.Equal(t, len(c.want), a.Size)
			assert.Equal(t, sha256.Sum256(c.want), a.Digest)
			assert.Equal(t, c.warning, hasWarning(m, "Malformed Base64"), "warnings: %q", m.Warnings)
			assert.Equal(t, "body", m.Text)
		})
	}
}

func TestParseBase64TextBody(t *testing.T) {
	text := strings.Repeat("Grüße aus Köln, 10 € — ", 20)
	body := wrap(base64.StdEncoding.EncodeToString([]byte(text)), 76, "\r\n")
	m, err := archive.NewParser("").Parse(mimeMessage("text/plain; charset=utf-8", "base64", body))
	require.NoError(t, err)
	assert.Equal(t, text, m.Text)
	assert.Empty(t, m.Warnings)
}

func TestParseQuotedPrintable(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"soft line breaks", "a long line=\r\n continued=\r\n here\r\nsecond line", "a long line continued here\r\nsecond line"},
		{"LF soft line breaks", "one=\ntwo\n", "onetwo\n"},
		{"escapes", "caf=C3=A9 =3D 100=25", "café = 100%"},
		{"lower-case escapes", "caf=c3=a9", "café"},
		{"stray equals sign", "a = b, a=b=\r\nc", "a = b, a=bc"},
		{"8-bit and control bytes", "caf\xc3\xa9\x01", "café\x01"},
		{"line longer than the decoder's buffer", strings.Repeat("x", 10000), strings.Repeat("x", 10000)},
	}
	p := archive.NewParser("")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := p.Parse(mimeMessage("text/plain; charset=utf-8", "quoted-printable", c.body))
			require.NoError(t, err)
			assert.Equal(t, c.want, m.Text)
			assert.Empty(t, m.Warnings)
		})
	}
	t.Run("attachment", func(t *testing.T) {
		m, err := p.Parse(withAttachment("quoted-printable", "\x00=FF=\r\nend"))
		require.NoError(t, err)
		require.Len(t, m.Attachments, 1)
		assert.Equal(t, []byte("\x00\xffend"), m.Attachments[0].Content)
	})
}

func TestParseDeclaredCharset(t *testing.T) {
	cases := []struct {
		name, contentType, cte, body, want string
	}{
		{"ISO-8859-1", "text/plain; charset=ISO-8859-1", "8bit", "Gr\xfc\xdfe, caf\xe9 \xa9 \xbd", "Grüße, café © ½"},
		{"ISO-8859-1 quoted-printable", "text/plain; charset=\"iso-8859-1\"", "quoted-printable", "caf=E9 na=EFve", "café naïve"},
		// 0x80-0x9F: what windows-1252 means, and what mail labelled ISO-8859-1 means by them.
		{"windows-1252", "text/plain; charset=windows-1252", "8bit", "\x93quoted\x94 \x80 5 \x96 caf\xe9", "“quoted” € 5 – café"},
		{"ISO-8859-1 read as windows-1252", "text/plain; charset=iso-8859-1", "8bit", "\x93x\x94", "“x”"},
		{"ISO-8859-15", "text/plain; charset=iso-8859-15", "8bit", "\xa4 \xbd", "€ œ"},
		{"windows-1251 base64", "text/plain; charset=windows-1251", "base64", base64.StdEncoding.EncodeToString([]byte("\xcf\xf0\xe8\xe2\xe5\xf2")), "Привет"},
		{"IBM850, an IANA name WHATWG lacks", "text/plain; charset=cp850", "8bit", "caf\x82", "café"},
		{"UTF-7", "text/plain; charset=utf-7", "7bit", "caf+AOk- +IKw-", "café €"},
		{"us-ascii", "text/plain; charset=us-ascii", "7bit", "plain text", "plain text"},
		{"UTF-8 that is not: read as windows-1252", "text/plain; charset=utf-8", "8bit", "ok \xff", "ok ÿ"},
		// Long enough for the old charset detector, which would have called it UTF-8.
		{"declared charset wins over the content", "text/plain; charset=iso-8859-1", "8bit", strings.Repeat("Gr\xc3\xbc\xc3\x9fe ", 40), strings.Repeat("GrÃ¼ÃŸe ", 40)},
	}
	p := archive.NewParser("")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := p.Parse(mimeMessage(c.contentType, c.cte, c.body))
			require.NoError(t, err)
			assert.Equal(t, c.want, m.Text)
			assert.Empty(t, m.Warnings)
		})
	}
}

func TestParseUnknownCharset(t *testing.T) {
	m, err := archive.NewParser("").Parse(mimeMessage("text/plain; charset=x-no-such-charset", "8bit", "caf\xe9"))
	require.NoError(t, err)
	assert.Equal(t, "café", m.Text, "read as windows-1252")
	assert.True(t, hasWarning(m, `unsupported charset "x-no-such-charset"`), "warnings: %q", m.Warnings)
}

func TestParseUnknownTransferEncoding(t *testing.T) {
	m, err := archive.NewParser("").Parse(mimeMessage("text/plain; charset=iso-8859-1", "x-rot13", "caf\xe9"))
	require.NoError(t, err)
	assert.Equal(t, "café", m.Text, "neither transfer encoding nor charset decoded; the text is valid UTF-8 (windows-1252)")
	assert.True(t, hasWarning(m, `Unrecognized Content-Transfer-Encoding type "x-rot13"`), "warnings: %q", m.Warnings)
}

func TestParseHTMLOnly(t *testing.T) {
	html := "<html><head><style>p{}</style></head><body><p>Caf=E9 <b>ouvert</b></p><p>Menu: <a href=3D\"http://x.test/m\">ici</a></p></body></html>"
	m, err := archive.NewParser("").Parse(mimeMessage("text/html; charset=iso-8859-1", "quoted-printable", html))
	require.NoError(t, err)
	assert.Contains(t, m.Text, "Café")
	assert.Contains(t, m.Text, "ouvert")
	assert.Contains(t, m.Text, "ici")
	assert.NotContains(t, m.Text, "<")
	assert.NotContains(t, m.Text, "p{}")
	assert.True(t, hasWarning(m, "did not contain a text/plain part"), "warnings: %q", m.Warnings)
}

func TestParseKeepsRawBytes(t *testing.T) {
	raw := withAttachment("base64", "AAEC\r\nAw==")
	orig := bytes.Clone(raw)
	m, err := archive.NewParser("").Parse(raw)
	require.NoError(t, err)
	assert.Equal(t, orig, raw)
	assert.Equal(t, sha256.Sum256(orig), m.Digest)
	assert.Equal(t, []byte{0, 1, 2, 3}, m.Attachments[0].Content)
}

// The analyzer's term sets are kept from one message to the next (termSets): a message's
// terms and positions are the same whatever was parsed before it, and stay its own after
// the set has served other messages.
func TestParseTermsIndependentOfEarlierMessages(t *testing.T) {
	small := []byte("From: Ann <ann@example.com>\r\nTo: bob@example.org\r\nSubject: quarterly report\r\n\r\nThe quarterly report is attached.\r\n")
	var body strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&body, "word%d filler%d ", i, i%7)
	}
	large := []byte("From: carol@example.net\r\nSubject: a long one\r\n\r\n" + body.String() + "\r\n")

	fresh, err := archive.NewParser("").Parse(small)
	require.NoError(t, err)
	want, wantPos := slices.Clone(fresh.Terms), fresh.Positioned

	p := archive.NewParser("")
	first, err := p.Parse(small)
	require.NoError(t, err)
	for range 3 {
		_, err := p.Parse(large)
		require.NoError(t, err)
		again, err := p.Parse(small)
		require.NoError(t, err)
		assert.Equal(t, want, again.Terms, "after a larger message")
		assert.Equal(t, wantPos, again.Positioned, "positions after a larger message")
	}
	assert.Equal(t, want, first.Terms, "the terms of a message parsed before others, kept")
	assert.Equal(t, wantPos, first.Positioned)
}
