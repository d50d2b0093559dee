package extract

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/unicode/norm"
)

// The simple fonts' base encodings: WinAnsi and MacRoman are windows-1252 and Mac OS
// Roman (PDF 32000-1 Annex D), StandardEncoding is ASCII with its own upper half.
var winAnsi, macRoman, standard = tableOf(charmap.Windows1252), tableOf(charmap.Macintosh), standardTable()

func tableOf(cm *charmap.Charmap) [256]string {
	var t [256]string
	for c := 0x20; c < 256; c++ {
		if r := cm.DecodeByte(byte(c)); r != utf8.RuneError {
			t[c] = string(r)
		}
	}
	return t
}

func standardTable() [256]string {
	var t [256]string
	for c := 0x20; c < 0x7f; c++ {
		t[c] = string(rune(c))
	}
	t['\''], t['`'] = "\u2019", "\u2018"
	for c, s := range standardHigh {
		t[c] = s
	}
	return t
}

// standardHigh is the upper half of StandardEncoding.
var standardHigh = map[int]string{
	0241: "¡", 0242: "¢", 0243: "£", 0244: "⁄", 0245: "¥", 0246: "ƒ", 0247: "§", 0250: "¤",
	0251: "'", 0252: "“", 0253: "«", 0254: "‹", 0255: "›", 0256: "ﬁ", 0257: "ﬂ", 0261: "–",
	0262: "†", 0263: "‡", 0264: "·", 0266: "¶", 0267: "•", 0270: "‚", 0271: "„", 0272: "”",
	0273: "»", 0274: "…", 0275: "‰", 0277: "¿", 0301: "`", 0302: "´", 0303: "ˆ", 0304: "˜",
	0305: "¯", 0306: "˘", 0307: "˙", 0310: "¨", 0312: "˚", 0313: "¸", 0315: "˝", 0316: "˛",
	0317: "ˇ", 0320: "—", 0341: "Æ", 0343: "ª", 0350: "Ł", 0351: "Ø", 0352: "Œ", 0353: "º",
	0361: "æ", 0365: "ı", 0370: "ł", 0371: "ø", 0372: "œ", 0373: "ß",
}

// glyphNames maps the glyph names of the Adobe Glyph List that Differences arrays
// commonly use beyond single letters, uniXXXX and uXXXX forms.
var glyphNames = map[string]string{
	"space": " ", "exclam": "!", "quotedbl": "\"", "numbersign": "#", "dollar": "$", "percent": "%",
	"ampersand": "&", "quotesingle": "'", "quoteright": "’", "parenleft": "(", "parenright": ")",
	"asterisk": "*", "plus": "+", "comma": ",", "hyphen": "-", "minus": "−", "period": ".", "slash": "/",
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
	"seven": "7", "eight": "8", "nine": "9", "colon": ":", "semicolon": ";", "less": "<", "equal": "=",
	"greater": ">", "question": "?", "at": "@", "bracketleft": "[", "backslash": "\\",
	"bracketright": "]", "asciicircum": "^", "underscore": "_", "grave": "`", "quoteleft": "‘",
	"braceleft": "{", "bar": "|", "braceright": "}", "asciitilde": "~", "bullet": "•",
	"endash": "–", "emdash": "—", "ellipsis": "…", "quotedblleft": "“", "quotedblright": "”",
	"quotesinglbase": "‚", "quotedblbase": "„", "guillemotleft": "«", "guillemotright": "»",
	"guilsinglleft": "‹", "guilsinglright": "›", "dagger": "†", "daggerdbl": "‡", "degree": "°",
	"Euro": "€", "trademark": "™", "copyright": "©", "registered": "®", "section": "§",
	"paragraph": "¶", "fi": "fi", "fl": "fl", "ff": "ff", "ffi": "ffi", "ffl": "ffl",
	"germandbls": "ß", "AE": "Æ", "ae": "æ", "OE": "Œ", "oe": "œ", "Oslash": "Ø", "oslash": "ø",
	"Lslash": "Ł", "lslash": "ł", "dotlessi": "ı", "nbspace": " ", "sfthyphen": "\u00ad",
	"periodcentered": "·", "multiply": "×", "divide": "÷", "sterling": "£", "yen": "¥", "cent": "¢",
	"florin": "ƒ", "perthousand": "‰", "currency": "¤", "exclamdown": "¡", "questiondown": "¿",
	"ordfeminine": "ª", "ordmasculine": "º", "Eth": "Ð", "eth": "ð", "Thorn": "Þ", "thorn": "þ",
	"mu": "µ", "plusminus": "±", "onehalf": "½", "onequarter": "¼", "threequarters": "¾",
}

// latinMarks builds names like eacute, Udieresis: a base letter and a mark.
var latinMarks = map[string]rune{
	"acute": '\u0301', "grave": '\u0300', "circumflex": '\u0302', "dieresis": '\u0308',
	"tilde": '\u0303', "ring": '\u030a', "cedilla": '\u0327', "caron": '\u030c',
}

// glyphText returns the text of a glyph name: the Adobe Glyph List's rules for the
// common names, uniXXXX, uXXXX[XX], ligatures joined by _, suffixes after a period
// dropped; "" for names that say nothing (g123, glyph7).
func glyphText(name string) string {
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	if strings.Contains(name, "_") {
		var b strings.Builder
		for _, part := range strings.Split(name, "_") {
			b.WriteString(glyphText(part))
		}
		return b.String()
	}
	if len(name) == 1 && isASCIILetter(name[0]) {
		return name
	}
	if s, ok := glyphNames[name]; ok {
		return s
	}
	if s, ok := glyphHex(name); ok {
		return s
	}
	if len(name) > 1 && isASCIILetter(name[0]) {
		if mark, ok := latinMarks[name[1:]]; ok {
			return composeLatin(name[0], mark)
		}
	}
	return ""
}

// glyphHex reads uniXXXX (one or more UTF-16 units) and uXXXX to uXXXXXX names.
func glyphHex(name string) (string, bool) {
	var hex string
	switch {
	case strings.HasPrefix(name, "uni") && len(name) >= 7 && (len(name)-3)%4 == 0:
		var b strings.Builder
		for i := 3; i < len(name); i += 4 {
			v, err := strconv.ParseUint(name[i:i+4], 16, 16)
			if err != nil {
				return "", false
			}
			b.WriteRune(rune(v))
		}
		return b.String(), true
	case strings.HasPrefix(name, "u") && len(name) >= 5 && len(name) <= 7:
		hex = name[1:]
	default:
		return "", false
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || !utf8.ValidRune(rune(v)) {
		return "", false
	}
	return string(rune(v)), true
}

// composeLatin returns a letter with a combining mark, composed (NFC) where Unicode
// has one character for it.
func composeLatin(base byte, mark rune) string {
	return norm.NFC.String(string(rune(base)) + string(mark))
}

// legacyCMaps maps the predefined CJK CMaps named by a composite font's Encoding to the
// code page their codes are in (their -H or -V writing mode does not matter here).
func legacyCMaps(name string) encoding.Encoding {
	switch {
	case strings.Contains(name, "RKSJ"):
		return japanese.ShiftJIS
	case strings.HasPrefix(name, "EUC-"):
		return japanese.EUCJP
	case strings.Contains(name, "GBK"), strings.HasPrefix(name, "GB-EUC"):
		return simplifiedchinese.GBK
	case strings.HasPrefix(name, "B5"), strings.HasPrefix(name, "ETen"), strings.HasPrefix(name, "HKscs"):
		return traditionalchinese.Big5
	case strings.HasPrefix(name, "KSC"):
		return korean.EUCKR
	}
	return nil
}
