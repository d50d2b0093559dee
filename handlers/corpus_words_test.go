package handlers_test

import (
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file makes search queries from each corpus message's own words, read without the
// archive's parser or the analyzer's word rules: the texts of corpus_text_test.go (the
// subject, the From, To and Cc names and addresses, every text part, the visible text and
// alt text of every HTML part, file names, the subject and texts of attached messages),
// split into words at every character that is not a Unicode letter, mark or number
// (docs/search-rules.md, "Words"; numbers rather than digits, so that m² stays one word).

// corpusText is one text of a message and where it comes from.
type corpusText struct {
	source string // "subject", "from name", "text", "html", "file name", "attached subject", …
	text   string
}

// corpusQuery is one query a message must be found by.
type corpusQuery struct {
	rel    string // the message's file
	q      string
	source string // where the words come from
}

// Per message: this many single words, phrases of two adjacent words, and one substring of
// a Chinese, Japanese or Korean run.
const (
	queryWords   = 8
	queryPhrases = 3
)

// queriesOf returns the queries of one message, the same at every run (the choice is
// seeded by the file name); notes says what could not be read. The single words are, in
// this order, up to three words with non-ASCII characters (charsets and accents are where
// readers differ), a word of each source not yet drawn from, then any words.
func queriesOf(m *corpusMessage) (queries []corpusQuery, notes []string) {
	texts, notes := messageTexts(mboxContent(m.raw), 0)
	h := fnv.New64a()
	h.Write([]byte(m.rel))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	var words, phrases, cjk []corpusQuery
	seen := map[string]bool{}
	for _, t := range texts {
		ws := splitWords(t.text)
		for i, w := range ws {
			if hasCJK(w) {
				if sub := cjkSubstring(w, rng); sub != "" {
					cjk = append(cjk, corpusQuery{m.rel, sub, t.source})
				}
				continue
			}
			if !seen[w] {
				seen[w] = true
				words = append(words, corpusQuery{m.rel, w, t.source})
			}
			if i > 0 && !hasCJK(ws[i-1]) && !seen[ws[i-1]+" "+w] {
				seen[ws[i-1]+" "+w] = true
				phrases = append(phrases, corpusQuery{m.rel, `"` + ws[i-1] + " " + w + `"`, t.source})
			}
		}
	}
	for _, list := range [][]corpusQuery{words, phrases, cjk} {
		rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	}
	queries = pickWords(words)
	queries = append(queries, phrases[:min(queryPhrases, len(phrases))]...)
	return append(queries, cjk[:min(1, len(cjk))]...), notes
}

// pickWords takes up to queryWords of words (shuffled): non-ASCII ones first, then one of
// each source, then the rest in order.
func pickWords(words []corpusQuery) []corpusQuery {
	var out []corpusQuery
	taken := make([]bool, len(words))
	take := func(n int, ok func(corpusQuery) bool) {
		for i, w := range words {
			if n == 0 || len(out) == queryWords {
				return
			}
			if !taken[i] && ok(w) {
				taken[i], out, n = true, append(out, w), n-1
			}
		}
	}
	take(3, func(w corpusQuery) bool {
		return strings.ContainsFunc(w.q, func(r rune) bool { return r >= utf8.RuneSelf })
	})
	sources := map[string]bool{}
	for _, w := range out {
		sources[w.source] = true
	}
	take(queryWords, func(w corpusQuery) bool {
		fresh := !sources[w.source]
		sources[w.source] = true
		return fresh
	})
	take(queryWords, func(corpusQuery) bool { return true })
	return out
}

// splitWords cuts text at every character that is not a letter, a mark or a number.
func splitWords(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.IsNumber(r)
	})
}

// isCJK reports whether r is written without spaces between words: Han, Hiragana,
// Katakana, Hangul, Bopomofo (docs/search-rules.md).
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo)
}

func hasCJK(w string) bool { return strings.ContainsFunc(w, isCJK) }

// cjkSubstring returns 2 or 3 consecutive characters of a run of such characters in w,
// "" when w has no run of two.
func cjkSubstring(w string, rng *rand.Rand) string {
	var runs [][]rune
	var run []rune
	for _, r := range w + " " {
		if isCJK(r) {
			run = append(run, r)
			continue
		}
		if len(run) >= 2 {
			runs = append(runs, run)
		}
		run = nil
	}
	if len(runs) == 0 {
		return ""
	}
	r := runs[rng.IntN(len(runs))]
	n := min(2+rng.IntN(2), len(r))
	start := rng.IntN(len(r) - n + 1)
	return string(r[start : start+n])
}
