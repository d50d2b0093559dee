package charset_test

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/charset"
)

// TestRaw covers rules 2 and 3: valid UTF-8 as is, else the first ASCII-compatible declared
// charset, else windows-1252; always valid UTF-8.
func TestRaw(t *testing.T) {
	cases := []struct {
		name, in string
		labels   []string
		want     string
	}{
		{"UTF-8 as is", "Formação", []string{"koi8-r"}, "Formação"},
		{"declared latin-1 (read as windows-1252)", "Forma\xe7\xe3o \x80", []string{"iso-8859-1"}, "Formação €"},
		{"koi8-r", "\xf0\xd2\xc9\xd7\xc5\xd4", []string{"koi8-r"}, "Привет"},
		{"shift_jis", "\x8e\x91\x97\xbf", []string{"shift_jis"}, "資料"},
		{"gb2312", "\xc4\xe3\xba\xc3", []string{"gb2312"}, "你好"},
		{"unknown label skipped", "caf\xe9", []string{"x-nothing", "windows-1252"}, "café"},
		{"UTF-16 is not ASCII-compatible: fallback", "caf\xe9", []string{"utf-16le"}, "café"},
		{"UTF-8 declared, not valid: fallback", "caf\xe9", []string{"utf-8"}, "café"},
		{"nothing declared: windows-1252", "\x93q\x94", nil, "“q”"},
	}
	for _, c := range cases {
		got := charset.Raw(c.in, c.labels...)
		assert.Equal(t, c.want, got, "%s: got %q; want %q", c.name, got, c.want)
		assert.True(t, utf8.ValidString(got), c.name)
	}
}

// TestHeader: raw bytes and encoded words in one value, an undecodable word kept.
func TestHeader(t *testing.T) {
	assert.Equal(t, "Formação – Verão", charset.Header("Forma\xe7\xe3o =?utf-8?q?=E2=80=93?= Ver\xe3o", "iso-8859-1"))
	assert.Equal(t, "Привет", charset.Header("=?koi8-r?b?8NLJ18XU?="))
	assert.Equal(t, "=?x-none?q?a?=", charset.Header("=?x-none?q?a?="))
}

// TestLookup covers rule 1.
func TestLookup(t *testing.T) {
	for _, label := range []string{"ISO-8859-1", "windows-1252", "cp850", "utf-7", "Shift_JIS", "gb2312", " koi8-r "} {
		assert.NotNil(t, charset.Lookup(label), label)
	}
	assert.Nil(t, charset.Lookup("x-no-such-charset"))
	assert.Nil(t, charset.Lookup(""))
}

// TestBody: a declared charset is read as declared; UTF-8 keeps its valid sequences and
// reads a stray byte as windows-1252; US-ASCII and the replacement labels are read as
// undeclared (UTF-8 when valid, else windows-1252); an unknown label is reported.
func TestBody(t *testing.T) {
	cases := []struct {
		label, in, want string
		known           bool
	}{
		{"utf-8", "résumé", "résumé", true},
		{"UTF-8", "r\xc3\xa9sum\xe9", "résumé", true}, // one valid sequence, one stray latin-1 byte
		{"iso-8859-1", "caf\xe9", "café", true},
		{"koi8-r", "\xd0\xd2\xc9\xd7\xc5\xd4", "привет", true},
		{"us-ascii", "r\xc3\xa9sum\xc3\xa9", "résumé", true}, // 8-bit UTF-8 under a US-ASCII label
		{"us-ascii", "caf\xe9", "café", true},
		{"iso-2022-kr", "caf\xe9", "café", true}, // WHATWG's replacement label
		{"x-unknown", "caf\xe9", "caf\xe9", false},
	}
	for _, c := range cases {
		out, known, err := charset.Body([]byte(c.in), c.label)
		require.NoError(t, err, c.label)
		assert.Equal(t, c.known, known, c.label)
		assert.Equal(t, c.want, string(out), "%s %q", c.label, c.in)
	}
}
