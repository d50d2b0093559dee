package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRTF(t *testing.T) {
	t.Parallel()
	const head = `{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fswiss\fcharset0 Arial;}{\f1\froman\fcharset204 Times New Roman Cyr;}}` +
		`{\colortbl ;\red255\green0\blue0;}{\stylesheet{\s0 Normal;}}{\info{\title Secret title}{\author Mallory}}` + "\n"
	tests := []struct {
		name, rtf, want string
	}{
		{"paragraphs, line and tab", head + `\pard Hello\par World\line two\tab three\par}`, "Hello\nWorld\ntwo\tthree"},
		{"cp1252 escapes", head + `Caf\'e9 na\'efve \'93quoted\'94 \'80 5}`, "Café naïve “quoted” € 5"},
		{"font charset 204 is windows-1251", head + `{\f1 \'cf\'f0\'e8\'e2\'e5\'f2} {\f0 ok}}`, "Привет ok"},
		{"unicode with the default single stand-in", head + `\u1055?\u1088?\u1080? x}`, "При x"},
		{"uc2 skips two stand-ins, \\'hh counting as one", head + `{\uc2\u26481\'93\'8c\u20140\'8b\'9e}}`, "東京"},
		{"uc0 has no stand-ins", head + `{\uc0\u233 t\u233}}`, "été"},
		{"surrogate pair", head + `\u-10179?\u-8704? end}`, "😀 end"},
		{"skipped destinations and ignorable groups", head + `{\*\generator Riched20;}{\pict\pngblip 89504e47}{\*\bkmkstart b}{\field{\*\fldinst HYPERLINK "http://x"}{\fldrslt shown}}}`, "shown"},
		{"hidden text", head + `seen {\v hidden} \v gone\v0  back}`, "seen back"},
		{"escaped braces and backslash, special characters", head + `a\{b\}c\\d\~e\_f\emdash g\bullet}`, "a{b}c\\d e-f—g•"},
		{"table cells and rows", head + `\trowd\cellx1\cellx2 A\cell B\cell\row C\cell\row}`, "A\tB\nC"},
		{"shift_jis code page, double-byte escapes", `{\rtf1\ansi\ansicpg932{\fonttbl{\f0\fcharset128 MS Mincho;}}\f0 \'93\'8c\'8b\'9e\par}`, "東京"},
		{"bin data skipped", head + `a{\bin4 }}}}}b}`, "ab"},
		{"line ends in the source are no text", head + "wo\r\nrd}", "word"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := extractOK(t, []byte(tt.rtf), "", "")
			assert.Equal(t, KindRTF, res.Kind)
			assert.Equal(t, tt.want, res.Text)
			assert.Empty(t, res.Note)
		})
	}
}

func TestRTFDamagedKeepsTextBefore(t *testing.T) {
	t.Parallel()
	res := extractOK(t, []byte(`{\rtf1\ansi Hello {\b world`), "", "")
	assert.Equal(t, "Hello world", res.Text)
	assert.Contains(t, res.Note, "damaged")
}
