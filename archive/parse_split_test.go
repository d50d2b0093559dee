package archive_test

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
)

// parseBothWays parses raw with the splitter and with enmime's ReadParts alone, fails the
// test on any difference in what comes out (warnings and attachment contents included) and
// returns why the splitter declined the message (nil when it took it).
func parseBothWays(t *testing.T, p *archive.Parser, name string, raw []byte) error {
	t.Helper()
	split, declined, splitErr := p.ParseVia(raw, true)
	whole, _, wholeErr := p.ParseVia(raw, false)
	if wholeErr != nil || splitErr != nil {
		assert.Equal(t, fmt.Sprint(wholeErr), fmt.Sprint(splitErr), "%s: errors", name)
		return declined
	}
	assert.Equal(t, whole, split, "%s: splitter and enmime disagree", name)
	return declined
}

// TestParseSplitMatchesEnmimeOnCorpus parses every corpus file both ways and insists that
// most multipart messages are split (a splitter that declines everything passes the
// comparison).
func TestParseSplitMatchesEnmimeOnCorpus(t *testing.T) {
	p := archive.NewParser("X-Spam-Flag: YES")
	split, declinedCount := 0, 0
	for _, path := range archivetest.CorpusFiles(t) {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		name := filepath.Base(path)
		if declined := parseBothWays(t, p, name, raw); declined != nil {
			declinedCount++
			t.Logf("%s: left to enmime: %v", name, declined)
		} else if p.SplitMultipart(raw) {
			split++
		}
	}
	t.Logf("multipart messages: %d split, %d left to enmime", split, declinedCount)
	assert.GreaterOrEqual(t, split, 60, "the corpus has 66 multipart messages the splitter takes")
	assert.GreaterOrEqual(t, float64(split)/float64(split+declinedCount), 0.85)
}

// multipartMessage builds a message whose top-level body is body, under boundary "TOP".
func multipartMessage(ctype, body string) []byte {
	return []byte("From: a@x.test\r\nTo: b@y.test\r\nSubject: t\r\nMIME-Version: 1.0\r\nContent-Type: " + ctype +
		"\r\n\r\n" + body)
}

func TestParseSplitNested(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nimage bytes")
	pdf := []byte("%PDF-1.4 not much of a pdf")
	raw := multipartMessage(`multipart/mixed; boundary="mix"`, "--mix\r\n"+
		"Content-Type: multipart/alternative; boundary=\"alt\"\r\n\r\n"+
		"--alt\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"+
		"Gr=C3=BC=C3=9Fe\r\n--mixed is not my boundary\r\n"+
		"--alt\r\nContent-Type: multipart/related; boundary=\"rel\"\r\n\r\n"+
		"--rel\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Grüße <img src=\"cid:logo\"></p>\r\n"+
		"--rel\r\nContent-Type: image/png\r\nContent-ID: <logo>\r\nContent-Disposition: inline; filename=\"logo.png\"\r\n"+
		"Content-Transfer-Encoding: base64\r\n\r\n"+base64.StdEncoding.EncodeToString(png)+"\r\n"+
		"--rel--\r\n"+
		"--alt--\r\n"+
		"--mix\r\nContent-Type: application/pdf; name=\"report.pdf\"\r\nContent-Disposition: attachment\r\n"+
		"Content-Transfer-Encoding: base64\r\n\r\n"+base64.StdEncoding.EncodeToString(pdf)+"\r\n"+
		"--mix--\r\n")
	p := archive.NewParser("")
	require.NoError(t, parseBothWays(t, p, "nested", raw), "the splitter takes it")
	require.True(t, p.SplitMultipart(raw))
	m, err := p.Parse(raw)
	require.NoError(t, err)
	assert.Equal(t, "Grüße\r\n--mixed is not my boundary", m.Text)
	require.Len(t, m.Attachments, 2)
	assert.Equal(t, []string{"report.pdf", "logo.png"}, []string{m.Attachments[0].Name, m.Attachments[1].Name})
	assert.Equal(t, pdf, m.Attachments[0].Content)
	assert.Equal(t, png, m.Attachments[1].Content)
}

func TestParseSplitFileNames(t *testing.T) {
	cases := []struct {
		name, headers, want string
		splits              bool
	}{
		{"RFC 2231", "Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename*=utf-8''na%C3%AFve%20r%C3%A9sum%C3%A9.txt", "naïve résumé.txt", true},
		{"RFC 2231 continuations", "Content-Type: application/octet-stream\r\nContent-Disposition: attachment;\r\n filename*0*=utf-8''%C3%A9t%C3%A9;\r\n filename*1*=%202024.pdf", "été 2024.pdf", true},
		{"RFC 2047 base64", "Content-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"=?UTF-8?B?w6l0w6kucGRm?=\"", "été.pdf", true},
		{"RFC 2047 Q in Content-Type name", "Content-Type: application/pdf; name=\"=?iso-8859-1?Q?=E9t=E9.pdf?=\"", "été.pdf", true},
		{"RFC 2047 in KOI8-R", "Content-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"=?koi8-r?B?8NLJ18XU?=.pdf\"", "Привет.pdf", true},
		{"RFC 2047 in an unknown charset", "Content-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"=?x-unknown?B?8NLJ18XU?=.pdf\"", "=?x-unknown?B?8NLJ18XU?=.pdf", false},
		{"malformed encoded word kept", "Content-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"=?utf-8?X?abc?=.pdf\"", "=?utf-8?X?abc?=.pdf", true},
	}
	p := archive.NewParser("")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := multipartMessage(`multipart/mixed; boundary="B"`, "--B\r\nContent-Type: text/plain\r\n\r\nbody\r\n--B\r\n"+
				c.headers+"\r\n\r\ncontent\r\n--B--\r\n")
			declined := parseBothWays(t, p, c.name, raw)
			assert.Equal(t, c.splits, declined == nil, "declined: %v", declined)
			m, err := p.Parse(raw)
			require.NoError(t, err)
			require.Len(t, m.Attachments, 1)
			assert.Equal(t, c.want, m.Attachments[0].Name)
			assert.Equal(t, "body", m.Text)
		})
	}
}

func TestParseSplitMissingClosingBoundary(t *testing.T) {
	p := archive.NewParser("")
	for name, body := range map[string]string{
		"last part unclosed":   "--B\r\nContent-Type: text/plain\r\n\r\nfirst\r\n--B\r\nContent-Type: text/plain\r\n\r\nsecond\r\n",
		"no boundary at all":   "just text\r\n",
		"nested part unclosed": "--B\r\nContent-Type: multipart/alternative; boundary=C\r\n\r\n--C\r\nContent-Type: text/plain\r\n\r\ninner\r\n--B--\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			raw := multipartMessage(`multipart/mixed; boundary="B"`, body)
			declined := parseBothWays(t, p, name, raw)
			assert.ErrorContains(t, declined, "boundary")
		})
	}
	m, err := p.Parse(multipartMessage(`multipart/mixed; boundary="B"`,
		"--B\r\nContent-Type: text/plain\r\n\r\nfirst\r\n--B\r\nContent-Type: text/plain\r\n\r\nsecond\r\n"))
	require.NoError(t, err)
	assert.Equal(t, "first\n--\nsecond\r\n", m.Text)
	assert.True(t, hasWarning(m, "was not closed correctly"), "warnings: %q", m.Warnings)
}

func TestParseSplitPreambleEpilogue(t *testing.T) {
	raw := multipartMessage(`multipart/alternative; boundary="B"`,
		"This is a multi-part message in MIME format.\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nthe text\r\n"+
			"--B\r\nContent-Type: text/html\r\n\r\n<p>the html</p>\r\n--B--\r\nepilogue text\r\n--B\r\nnot a part\r\n")
	p := archive.NewParser("")
	require.NoError(t, parseBothWays(t, p, "preamble", raw))
	m, err := p.Parse(raw)
	require.NoError(t, err)
	assert.Equal(t, "the text", m.Text)
	assert.Empty(t, m.Attachments)
	assert.Empty(t, m.Warnings)
}

// TestParseSplitQuirks covers what enmime's boundary reader does that a plain MIME splitter
// would not: each is either reproduced or left to enmime, with the same outcome.
func TestParseSplitQuirks(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 300) // past the 4 KiB a part starts with
	cases := []struct {
		name, body string
		splits     bool
	}{
		{"LF line endings", "--B\nContent-Type: text/plain\n\nlf text\n--B--\n", true},
		{"white space after the delimiter", "--B \t\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--  \r\n", true},
		{"boundary followed by more characters", "--B\r\nContent-Type: text/plain\r\n\r\n--Bx is text\r\n--B--\r\n", true},
		{"part without a header", "--B\r\n\r\nno header\r\n--B--\r\n", true},
		{"part without a content type", "--B\r\nContent-Disposition: attachment; filename=a.txt\r\n\r\nx\r\n--B--\r\n", true},
		{"empty part", "--B\r\n--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--\r\n", false},
		{"boundary inside a line near the part start", "--B\r\nContent-Type: text/plain\r\n\r\nsee --B here\r\n--B--\r\n", false},
		{"boundary inside a line further on", "--B\r\nContent-Type: text/plain\r\n\r\n" + long + " --B here\r\n--B--\r\n", true},
		{"delimiter with a bare CR before it", "--B\r\nContent-Type: text/plain\r\n\r\nx\r--B\r\nContent-Type: text/plain\r\n\r\ny\r\n--B--\r\n", false},
		{"text part with a boundary parameter", "--B\r\nContent-Type: text/plain; boundary=C\r\n\r\nx\r\n--B--\r\n", false},
		{"closing boundary without a line break", "--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--", true},
	}
	p := archive.NewParser("")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			declined := parseBothWays(t, p, c.name, multipartMessage(`multipart/mixed; boundary="B"`, c.body))
			assert.Equal(t, c.splits, declined == nil, "declined: %v", declined)
		})
	}
}

// TestParseSplitMatchesEnmimeGenerated compares both ways on generated messages: nested
// multiparts with the line endings, boundaries, headers, file names and near-boundary lines
// that real mail has, some of them malformed.
func TestParseSplitMatchesEnmimeGenerated(t *testing.T) {
	p := archive.NewParser("")
	r := rand.New(rand.NewPCG(1, 2))
	split := 0
	const n = 400
	for i := range n {
		raw := generateMessage(r)
		if parseBothWays(t, p, fmt.Sprintf("generated %d", i), raw) == nil && p.SplitMultipart(raw) {
			split++
		}
		if t.Failed() {
			t.Logf("message %d:\n%s", i, raw)
			break
		}
	}
	t.Logf("%d of %d generated messages split", split, n)
	assert.Greater(t, split, n/2, "the generator must exercise the splitter")
}

// FuzzParseSplit compares both ways on mutated messages (go test -fuzz FuzzParseSplit ./archive/).
func FuzzParseSplit(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(generateMessage(r))
	}
	p := archive.NewParser("")
	f.Fuzz(func(t *testing.T, raw []byte) {
		parseBothWays(t, p, "fuzzed", raw)
	})
}

// generateMessage makes a random multipart message (see TestParseSplitMatchesEnmimeGenerated).
func generateMessage(r *rand.Rand) []byte {
	g := &generator{r: r, nl: []string{"\r\n", "\n"}[r.IntN(2)]}
	if r.IntN(8) == 0 {
		g.nl = "" // mixed line endings
	}
	ctype, body := g.multipart(0)
	return []byte(g.lines("From: a@x.test", "To: b@y.test", "Subject: generated", "MIME-Version: 1.0", "Content-Type: "+ctype, "") + body)
}

type generator struct {
	r  *rand.Rand
	nl string // "" for a random one per line
	id int
}

func (g *generator) eol() string {
	if g.nl != "" {
		return g.nl
	}
	return []string{"\r\n", "\n"}[g.r.IntN(2)]
}

func (g *generator) lines(ls ...string) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l + g.eol())
	}
	return b.String()
}

func (g *generator) pick(options ...string) string { return options[g.r.IntN(len(options))] }

// multipart returns a multipart Content-Type value and its body.
func (g *generator) multipart(depth int) (string, string) {
	g.id++
	boundary := g.pick("b", "----=_Part_", "=_", "-", "Apple-Mail=_", "000000000000") + fmt.Sprint(g.id) + g.pick("", "xyz", "_alt", "==")
	ctype := g.pick("multipart/mixed", "multipart/alternative", "multipart/related", "multipart/report") + "; boundary="
	if g.r.IntN(2) == 0 {
		ctype += boundary
	} else {
		ctype += `"` + boundary + `"`
	}
	var b strings.Builder
	if g.r.IntN(3) == 0 {
		b.WriteString(g.lines("This is a multi-part message in MIME format.", ""))
	}
	for range 1 + g.r.IntN(4) {
		b.WriteString("--" + boundary + g.pick("", "", "", " ", "\t") + g.eol())
		if depth < 2 && g.r.IntN(4) == 0 {
			sub, body := g.multipart(depth + 1)
			b.WriteString(g.lines("Content-Type: "+sub, "") + body)
		} else {
			b.WriteString(g.leaf(boundary))
		}
	}
	switch g.r.IntN(12) {
	case 0: // no closing boundary
	case 1:
		b.WriteString("--" + boundary + "--") // at the very end, no line break
	default:
		b.WriteString("--" + boundary + "--" + g.pick("", " ") + g.eol())
		if g.r.IntN(3) == 0 {
			b.WriteString(g.lines("epilogue", "--"+boundary+"x"))
		}
	}
	return ctype, b.String()
}

// leaf returns a part, header and content; boundary is its parent's, for near misses.
func (g *generator) leaf(boundary string) string {
	var header []string
	text := g.text(boundary)
	switch g.r.IntN(8) {
	case 0:
		header = []string{"Content-Type: text/plain; charset=" + g.pick("utf-8", "iso-8859-1", "us-ascii", `"windows-1252"`)}
	case 1:
		header = []string{"Content-Type: text/html; charset=utf-8", "Content-Transfer-Encoding: quoted-printable"}
		text = "<p>" + strings.ReplaceAll(text, "=", "=3D") + "</p>"
	case 2:
		header = []string{"Content-Type: application/pdf" + g.fileParam("name"), "Content-Transfer-Encoding: base64",
			"Content-Disposition: " + g.pick("attachment", "inline") + g.fileParam("filename")}
		text = wrap(base64.StdEncoding.EncodeToString([]byte(text)), 76, g.eol())
	case 3:
		header = []string{"Content-Type: image/png", "Content-ID: <img@x>", "Content-Transfer-Encoding: base64"}
		text = base64.StdEncoding.EncodeToString([]byte(text))
	case 4:
		header = []string{"Content-Type: message/rfc822"}
		_, body := g.multipart(2)
		text = "Subject: inner" + g.eol() + "Content-Type: multipart/mixed; boundary=" + boundary + g.eol() + g.eol() + body
	case 5:
		header = []string{"Content-Disposition: attachment" + g.fileParam("filename")} // no Content-Type
	case 6:
		header = []string{"content-type: TEXT/PLAIN;charset=utf-8;format=flowed", "X-Folded: one", "\ttwo"}
	default:
		header = []string{"Content-Type: text/plain"}
	}
	if g.r.IntN(10) == 0 {
		return g.lines(header...) // no empty line: all header
	}
	return g.lines(append(header, "")...) + text + g.eol()
}

func (g *generator) fileParam(param string) string {
	switch g.r.IntN(6) {
	case 0:
		return ""
	case 1:
		return "; " + param + "*=utf-8''r%C3%A9sum%C3%A9.pdf"
	case 2:
		return "; " + param + `="=?UTF-8?B?csOpc3Vtw6kucGRm?="`
	case 3:
		return "; " + param + `="=?koi8-r?B?8NLJ18XU?=.pdf"`
	default:
		return "; " + param + `="report ` + fmt.Sprint(g.r.IntN(100)) + `.pdf"`
	}
}

// text returns lines of content, some of them close to the boundary.
func (g *generator) text(boundary string) string {
	var ls []string
	for range g.r.IntN(6) {
		switch g.r.IntN(14) {
		case 0:
			ls = append(ls, "--"+boundary+"x not a delimiter")
		case 1:
			ls = append(ls, "text --"+boundary+" inside a line")
		case 2:
			ls = append(ls, "")
		case 3:
			ls = append(ls, strings.Repeat("long line ", 500))
		case 4:
			ls = append(ls, "-- ", "signature")
		default:
			ls = append(ls, "Grüße, line "+fmt.Sprint(g.r.IntN(1000))+g.pick("", " ", "\t"))
		}
	}
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			b.WriteString(g.eol())
		}
		b.WriteString(l)
	}
	return b.String()
}

// TestParseSplitOwnsContent checks that attachments do not share the caller's bytes: the
// splitter slices parts out of the message.
func TestParseSplitOwnsContent(t *testing.T) {
	raw := multipartMessage(`multipart/mixed; boundary="B"`, "--B\r\nContent-Type: text/plain\r\n\r\nbody\r\n"+
		"--B\r\nContent-Type: text/csv\r\nContent-Disposition: attachment; filename=a.csv\r\n\r\na,b\r\n"+
		"--B\r\nContent-Type: application/octet-stream; name=b.bin\r\nContent-Transfer-Encoding: base64\r\n\r\nAAEC\r\n--B--\r\n")
	p := archive.NewParser("")
	require.NoError(t, parseBothWays(t, p, "owns", raw))
	m, err := p.Parse(raw)
	require.NoError(t, err)
	for i := range raw {
		raw[i] = 'x'
	}
	require.Len(t, m.Attachments, 2)
	assert.Equal(t, []byte("a,b"), m.Attachments[0].Content)
	assert.Equal(t, []byte{0, 1, 2}, m.Attachments[1].Content)
}
