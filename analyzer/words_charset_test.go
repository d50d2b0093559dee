package analyzer

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDecode8bit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       []byte
		declared string
		want     string
	}{
		{"ascii", []byte("plain"), "", "plain"},
		{"undeclared valid utf-8", []byte("caf\xc3\xa9"), "", "café"},
		{"undeclared invalid utf-8 is windows-1252", []byte("caf\xe9 \x80 \x93quoted\x94"), "", "café € “quoted”"},
		{"unknown label is undeclared (utf-8)", []byte("caf\xc3\xa9"), "x-unknown-charset", "café"},
		{"unknown label is undeclared (1252)", []byte("caf\xe9"), "x-unknown-charset", "café"},
		{"declared us-ascii with 8-bit utf-8", []byte("caf\xc3\xa9"), "us-ascii", "café"},
		{"declared us-ascii with 8-bit latin", []byte("caf\xe9"), "US-ASCII", "café"},
		{"declared iso-8859-1", []byte("caf\xe9"), "ISO-8859-1", "café"},
		{"declared latin1 is read as windows-1252", []byte("\x93x\x94"), "iso-8859-1", "“x”"},
		{"declared iso-8859-2", []byte("\xb3\xf3d\xbc"), "iso-8859-2", "łódź"},
		{"declared koi8-r", []byte("\xf0\xd2\xc9\xd7\xc5\xd4"), "koi8-r", "Привет"},
		{"declared shift_jis", []byte("\x93\x8c\x8b\x9e"), "Shift_JIS", "東京"},
		{"declared label with spaces and quotes", []byte("caf\xe9"), ` "ISO-8859-1" `, "café"},
		{"declared utf-8 keeps valid sequences, reads stray bytes as windows-1252", []byte("caf\xc3\xa9 na\xefve"), "utf-8", "café naïve"},
		{"replacement encoding is undeclared", []byte("caf\xc3\xa9"), "iso-2022-kr", "café"},
		{"empty", nil, "utf-8", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Decode8bit(tt.in, tt.declared)
			assert.Equal(t, tt.want, got, "Decode8bit(%q, %q): got %q; want %q", tt.in, tt.declared, got, tt.want)
		})
	}
}
