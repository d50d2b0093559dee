package analyzer

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// wordsOf collects the tokens Words emits for text.
func wordsOf(text string) []string {
	var got []string
	Words(text, func(w string) { got = append(got, w) })
	return got
}

func TestWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       []string
	}{
		{"plain words and punctuation", "Hello, World!", []string{"hello", "world"}},
		{"empty", "", nil},
		{"only punctuation", " --- !!! ... ", nil},
		{"single letters are words", "a b c", []string{"a", "b", "c"}},
		{"digits", "Order 12345, total 3.14", []string{"order", "12345", "total", "3", "14"}},

		// Accents: the index keeps the accent-stripped form, so both ways match.
		{"precomposed accents stripped", "résumé", []string{"resume"}},
		{"upper-case accents", "RÉSUMÉ", []string{"resume"}},
		{"decomposed accents", "re\u0301sume\u0301", []string{"resume"}},
		{"combining mark does not split", "nai\u0308ve cafe\u0301s", []string{"naive", "cafes"}},
		{"vietnamese stacked marks", "Tiếng Việt", []string{"tieng", "viet"}},
		{"letters with stroke and ligatures", "Łódź Ærø cœur Đà Nẵng", []string{"lodz", "aero", "coeur", "da", "nang"}},
		{"cyrillic yo", "Ёлка", []string{"елка"}},
		{"greek tonos and final sigma", "Οδυσσεύς", []string{"οδυσσευσ"}},
		{"greek capitals", "ΟΔΥΣΣΕΥΣ", []string{"οδυσσευσ"}},
		{"arabic vowel points and tatweel", "كَتَبَ كتـــب", []string{"كتب", "كتب"}},
		{"hebrew points", "שָׁלוֹם", []string{"שלום"}},
		{"devanagari marks kept", "हिन्दी भाषा", []string{"हिन्दी", "भाषा"}},
		{"thai marks kept", "ไม่", []string{"ไม่"}},
		{"leading lone mark dropped", "\u0301abc", []string{"abc"}},
		{"lone mark is no word", "x \u0301 y", []string{"x", "y"}},

		// NFKC and case folding.
		{"full-width letters", "ｒｅｐｏｒｔ．ｐｄｆ", []string{"report", "pdf"}},
		{"ligature fi", "ﬁle ﬂow oﬀer", []string{"file", "flow", "offer"}},
		{"circled and roman numerals", "① Ⅻ", []string{"1", "xii"}},
		{"superscript", "m²", []string{"m2"}},
		{"mathematical letters fold after their compatibility mapping", "ℌello 𝐖𝐨𝐫𝐥𝐝", []string{"hello", "world"}},
		{"german sharp s", "Straße STRASSE straße ẞ", []string{"strasse", "strasse", "strasse", "ss"}},
		{"turkish dotted capital I", "İstanbul ISTANBUL ıstanbul", []string{"istanbul", "istanbul", "istanbul"}},
		{"kelvin and angstrom signs", "\u212A \u212B", []string{"k", "a"}},
		{"soft hyphen joins", "hyphen\u00ADation", []string{"hyphenation"}},
		{"zero width joiner joins", "می\u200cخواهم", []string{"میخواهم"}},
		{"bidi marks join", "ab\u200ecd", []string{"abcd"}},
		{"zero width space splits", "ab\u200bcd", []string{"ab", "cd"}},
		{"no-break space splits", "ab\u00a0cd", []string{"ab", "cd"}},
		{"ideographic space splits", "ab\u3000cd", []string{"ab", "cd"}},

		// Chinese, Japanese and Korean: overlapping bigrams, a lone character as itself.
		{"chinese bigrams", "我爱北京天安门", []string{"我爱", "爱北", "北京", "京天", "天安", "安门"}},
		{"chinese lone character", "东 西", []string{"东", "西"}},
		{"chinese with punctuation", "北京，上海。", []string{"北京", "上海"}},
		{"japanese kana and kanji", "東京タワーに行った", []string{"東京", "京タ", "タワ", "ワー", "ーに", "に行", "行っ", "った"}},
		{"half-width katakana with voicing", "ｶﾞｲﾄﾞ", []string{"ガイ", "イド"}},
		{"japanese voiced marks kept", "がか", []string{"がか"}},
		{"korean", "학교에서 공부", []string{"학교", "교에", "에서", "공부"}},
		{"korean jamo composed", "\u1112\u1161\u11AB", []string{"한"}},
		{"latin then cjk", "iPhone買った", []string{"iphone", "買っ", "った"}},
		{"cjk between latin", "a東b", []string{"a", "東", "b"}},

		// Emoji and symbols are separators.
		{"emoji", "I ❤️ Go!!! 👍🏽 ok 👨\u200d👩\u200d👧 done", []string{"i", "go", "ok", "done"}},
		{"keycap", "1️⃣ 2\u20e3", []string{"1", "2"}},
		{"math symbols", "a+b=c ≠ d", []string{"a", "b", "c", "d"}},

		// Addresses, hosts, URLs and file names split at their punctuation.
		{"address", "Alice <alice@example.com>", []string{"alice", "alice", "example", "com"}},
		{"host", "mail.example.co.uk", []string{"mail", "example", "co", "uk"}},
		{"url", "https://www.example.org/path/to?q=1&x=y#frag", []string{"https", "www", "example", "org", "path", "to", "q", "1", "x", "y", "frag"}},
		{"file name", "Rechnung_2024-03.xlsx", []string{"rechnung", "2024", "03", "xlsx"}},
		{"apostrophe", "don't l'été", []string{"don", "t", "l", "ete"}},
		{"unicode address", "josé@exämple.de", []string{"jose", "example", "de"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := wordsOf(tt.text)
			assert.Equal(t, tt.want, got, "Words(%q): got %q; want %q", tt.text, got, tt.want)
		})
	}
}

func TestWordsCutsLongWordsAtARuneBoundary(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", MaxWordBytes+50)
	assert.Equal(t, []string{long[:MaxWordBytes]}, wordsOf(long))

	accented := strings.Repeat("ж", MaxWordBytes) // two bytes each
	got := wordsOf(accented)
	assert.Len(t, got, 1)
	assert.LessOrEqual(t, len(got[0]), MaxWordBytes)
	assert.Equal(t, strings.Repeat("ж", MaxWordBytes/2), got[0])

	// The query side cuts the same way, so a long word still finds itself.
	q, err := ParseQuery(long)
	assert.NoError(t, err)
	assert.Equal(t, []string{long[:MaxWordBytes]}, q.Terms)
}

func TestWordsEmitsStableStrings(t *testing.T) {
	t.Parallel()
	var kept []string
	Words("Alpha beta ÉCOLE 東京都 gamma", func(w string) { kept = append(kept, w) })
	assert.Equal(t, []string{"alpha", "beta", "ecole", "東京", "京都", "gamma"}, kept)
}

func TestAppendTerms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       []string
	}{
		{"one word", "Hello", []string{"hello"}},
		{"pairs of adjacent words", "the report.pdf", []string{"the", "report", "the report", "pdf", "report pdf"}},
		{"cjk bigrams pair up", "東京都", []string{"東京", "京都", "東京 京都"}},
		{"nothing", "!!!", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := AppendTerms(nil, tt.text)
			assert.Equal(t, tt.want, got, "AppendTerms(%q): got %q; want %q", tt.text, got, tt.want)
		})
	}
}

func TestTermSetKeepsDistinctTermsAcrossTexts(t *testing.T) {
	t.Parallel()
	var s TermSet
	s.Add("Report report.PDF")
	s.Add("pdf attached")
	// No pair joins the last word of one text to the first of the next.
	assert.Equal(t, []string{"report", "report report", "pdf", "report pdf", "attached", "pdf attached"}, s.Terms())
	assert.Equal(t, 6, s.Len())
	s.Reset()
	assert.Empty(t, s.Terms())
}

// MaxBytes keeps the set within its bound, says so, and Reset starts afresh.
func TestTermSetMaxBytes(t *testing.T) {
	t.Parallel()
	s := TermSet{MaxBytes: 12}
	s.Add("alpha beta gamma")
	assert.Equal(t, []string{"alpha", "beta"}, s.Terms(), "alpha(5)+beta(4) fit, the pair (10) and gamma do not")
	assert.True(t, s.Truncated())
	s.Reset()
	assert.False(t, s.Truncated())
	s.Add("one two")
	assert.Equal(t, []string{"one", "two"}, s.Terms(), "the pair (7 bytes) is past the bound")
	assert.True(t, s.Truncated())
	s.Reset()
	s.Add("one")
	assert.Equal(t, []string{"one"}, s.Terms())
	assert.False(t, s.Truncated())
}

// Case folding that lengthens text (ΐ folds to three characters, ß to two) is read whole.
func TestWordsFoldThatLengthensText(t *testing.T) {
	t.Parallel()
	got := wordsOf(strings.Repeat("ΐ ß ", 3000))
	assert.Len(t, got, 6000)
	assert.Equal(t, []string{"ι", "ss"}, got[:2])
	assert.Equal(t, []string{"ι", "ss"}, got[5998:])
}

// Words reads hostile text in time linear in its size: endless marks, one endless word,
// endless CJK, case folding that lengthens text.
func TestWordsIsLinearOnHostileInput(t *testing.T) {
	t.Parallel()
	const n = 1 << 20
	for name, text := range map[string]string{
		"marks after one letter": "a" + strings.Repeat("\u0301\u0316", n/4),
		"marks alone":            strings.Repeat("\u0301", n/2),
		"one long word":          strings.Repeat("é", n/2),
		"cjk":                    strings.Repeat("東京", n/6),
		"hangul jamo":            strings.Repeat("\u1112\u1161\u11AB", n/9),
		"lengthening fold":       strings.Repeat("ΐ", n/2),
		"ignorables":             strings.Repeat("a\u200d", n/4),
		"invalid utf-8":          strings.Repeat("\xff\xfe", n/2),
	} {
		start := time.Now()
		count := 0
		Words(text, func(string) { count++ })
		elapsed := time.Since(start)
		assert.Less(t, elapsed, 10*time.Second, "%s: took %s", name, elapsed)
		t.Logf("%s: %d bytes, %d words, %s", name, len(text), count, elapsed)
	}
}

// A Chinese, Japanese or Korean character keeps its marks, but a bigram is cut like any
// word, however many marks follow it.
func TestWordsCutsBigramsHeavyWithMarks(t *testing.T) {
	t.Parallel()
	heavy := "東" + strings.Repeat("\u0301", 300) + "京都"
	got := wordsOf(heavy)
	assert.Len(t, got, 2)
	for _, w := range got {
		assert.LessOrEqual(t, len(w), MaxWordBytes, "word %q", w)
	}
	assert.Equal(t, "京都", got[1])
}
