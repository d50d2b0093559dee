package analyzer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/width"
)

// wordSamples are words in their canonical form, from many scripts.
var wordSamples = []string{
	"report", "résumé", "naïve", "straße", "İstanbul", "Οδυσσεύς", "ΣΊΣΥΦΟΣ", "Ёлка", "Łódź", "cœur",
	"Tiếng", "Việt", "hyphenation", "12345", "x", "a1b2", "Ærø", "ﬁnance", "Ǆemal", "façade",
	"Ångström", "crème", "brûlée", "São", "Paulo", "Zürich", "Kraków", "Μάρτιος", "Москва", "ǅ",
}

// wordRenderings turn a word into another form the same word may take in mail.
var wordRenderings = []func(*rand.Rand, string) string{
	func(_ *rand.Rand, s string) string { return strings.ToUpper(s) },
	func(_ *rand.Rand, s string) string { return strings.ToLower(s) },
	func(_ *rand.Rand, s string) string { return cases.Title(language.Und).String(s) },
	func(_ *rand.Rand, s string) string { return cases.Upper(language.Turkish).String(s) },
	func(_ *rand.Rand, s string) string { return norm.NFD.String(s) },
	func(_ *rand.Rand, s string) string { return norm.NFC.String(s) },
	func(_ *rand.Rand, s string) string { return norm.NFKD.String(s) },
	func(_ *rand.Rand, s string) string { return width.Widen.String(s) },
	func(r *rand.Rand, s string) string { // random case per letter
		var b strings.Builder
		for _, c := range s {
			if r.IntN(2) == 0 {
				b.WriteString(strings.ToUpper(string(c)))
			} else {
				b.WriteRune(c)
			}
		}
		return b.String()
	},
	func(_ *rand.Rand, s string) string { return wordStripMarks(norm.NFD.String(s)) },
}

// wordStripMarks drops every combining mark, as someone typing without accents would.
func wordStripMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0x300 && r <= 0x36f {
			return -1
		}
		return r
	}, s)
}

func TestPropertyWordFormsGiveTheSameTerms(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		n := 1 + rng.IntN(5)
		canonical := make([]string, n)
		rendered := make([]string, n)
		for j := range canonical {
			w := wordSamples[rng.IntN(len(wordSamples))]
			canonical[j] = w
			// One to three renderings, applied in turn.
			for k := 0; k <= rng.IntN(3); k++ {
				w = wordRenderings[rng.IntN(len(wordRenderings))](rng, w)
			}
			rendered[j] = w
		}
		sep := []string{" ", ", ", "\n", ".", "\u3000", "\u00a0"}[rng.IntN(6)]
		want := AppendTerms(nil, strings.Join(canonical, sep))
		got := AppendTerms(nil, strings.Join(rendered, sep))
		require.Equal(t, want, got, "canonical %q rendered %q", canonical, rendered)
	}
}

// Normalising the analyzer's own output changes nothing: a term analyzes to itself.
func TestPropertyTermsAreFixedPoints(t *testing.T) {
	t.Parallel()
	for _, w := range wordSamples {
		for _, term := range wordsOf(w) {
			assert.Equal(t, []string{term}, wordsOf(term), "term %q of %q", term, w)
		}
	}
}

var wordCJKAlphabet = []rune("東京都庁大阪北京上海我爱天安门学校会社的是了人在有中国日本語ひらがなカタカナーっ한국어학교에서공부했다")

func TestPropertyAnyCJKSubstringIsFound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		// A text of CJK runs, with Latin words and punctuation between them.
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			for range 1 + rng.IntN(12) {
				b.WriteRune(wordCJKAlphabet[rng.IntN(len(wordCJKAlphabet))])
			}
			b.WriteString([]string{" ", "。", "abc", "、", "\n", "1"}[rng.IntN(6)])
		}
		text := b.String()
		terms := map[string]bool{}
		for _, term := range AppendTerms(nil, text) {
			terms[term] = true
		}
		runes := []rune(text)
		for range 20 {
			start := rng.IntN(len(runes))
			end := start + 2 + rng.IntN(6)
			if end > len(runes) {
				continue
			}
			sub := runes[start:end]
			if slices.ContainsFunc(sub, func(r rune) bool { return !wordIsCJK(r) }) {
				continue
			}
			q, err := ParseQuery(string(sub))
			require.NoError(t, err)
			require.NotEmpty(t, q.Terms, "query %q", string(sub))
			for _, term := range q.Terms {
				require.True(t, terms[term], "text %q: substring %q: term %q missing", text, string(sub), term)
			}
		}
	}
}
