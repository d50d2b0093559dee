package analyzer

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules of a search query, read with the same word rules as the text (words.go):
//
//  1. Every word is required; there are no operators (OR, -, AND are words or punctuation).
//  2. Words typed together without a space are a phrase: report.pdf is report then pdf,
//     alice@example.com is alice, example, com in sequence, a Chinese run is its bigrams in
//     sequence. A phrase is the pairs of its adjacent words (a lone word is itself).
//  3. "a phrase" between double quotes (", “ ”, „ or the full-width ＂) is one phrase; a
//     quote left open runs to the end of the query. Inside quotes * is punctuation.
//  4. word* is a prefix when the word has MinPrefixRunes characters or more once
//     normalised; a shorter one is the plain word. A prefix is never part of a phrase
//     (alice@exam* requires alice and a word beginning exam), and * after Chinese,
//     Japanese or Korean text is ignored (their runs already match anywhere).
//  5. A one-character word is a word: it matches that word only, never inside others.
//  6. A query with no searchable word is empty: no text condition.
//  7. Bounds: at most MaxQueryBytes bytes and MaxQueryTerms distinct terms and prefixes;
//     more is ErrQueryTooLong, never a silent truncation.

// MaxQueryTerms bounds the distinct terms and prefixes of one query.
const MaxQueryTerms = 32

// MaxQueryBytes bounds the length of a query in bytes.
const MaxQueryBytes = 4096

// MinPrefixRunes is the shortest prefix, in characters, that word* searches for.
const MinPrefixRunes = 3

// ErrQueryTooLong is returned for a query past MaxQueryBytes or MaxQueryTerms.
var ErrQueryTooLong = errors.New("search query too long")

// Query is a parsed search query: a message matches when its index terms (AppendTerms)
// hold every one of Terms, and for each of Prefixes a word (a term without
// PairSeparator) that begins with it.
type Query struct {
	// Terms are words, bigrams and pairs "w1 w2", distinct, in the order typed.
	Terms []string
	// Prefixes are normalised word beginnings of MinPrefixRunes characters or more.
	Prefixes []string
}

// Empty reports whether q has no searchable word, so sets no text condition.
func (q Query) Empty() bool { return len(q.Terms) == 0 && len(q.Prefixes) == 0 }

// ParseQuery reads a search query by the rules above.
func ParseQuery(s string) (Query, error) {
	if len(s) > MaxQueryBytes {
		return Query{}, fmt.Errorf("%w: %d bytes, at most %d", ErrQueryTooLong, len(s), MaxQueryBytes)
	}
	var p queryParser
	inQuotes, start := false, 0
	for i, r := range s {
		if queryIsQuote(r) {
			p.segment(s[start:i], inQuotes)
			inQuotes, start = !inQuotes, i+utf8.RuneLen(r)
		}
	}
	p.segment(s[start:], inQuotes)
	if n := len(p.q.Terms) + len(p.q.Prefixes); n > MaxQueryTerms {
		return Query{}, fmt.Errorf("%w: %d terms, at most %d", ErrQueryTooLong, n, MaxQueryTerms)
	}
	return p.q, nil
}

// PrefixEnd returns the least string above every term that begins with prefix, in byte
// order: prefix followed by U+10FFFF, a code point no term holds. A prefix matches the
// terms t with prefix <= t < PrefixEnd(prefix).
func PrefixEnd(prefix string) string { return prefix + "\U0010FFFF" }

type queryParser struct {
	q    Query
	seen map[string]bool
}

func queryIsQuote(r rune) bool {
	return r == '"' || r == '“' || r == '”' || r == '„' || r == '＂'
}

func queryIsStar(r rune) bool { return r == '*' || r == '＊' }

// segment reads text between quotes (one phrase) or outside them (chunks split at spaces).
func (p *queryParser) segment(text string, quoted bool) {
	if quoted {
		p.phrase(queryWords(text))
		return
	}
	for _, chunk := range strings.FieldsFunc(text, unicode.IsSpace) {
		words := queryWords(chunk)
		last, _ := utf8.DecodeLastRuneInString(chunk)
		if n := len(words); n > 0 && queryIsStar(last) && queryIsPrefix(words[n-1]) {
			p.add(&p.q.Prefixes, words[n-1])
			words = words[:n-1]
		}
		p.phrase(words)
	}
}

// queryIsPrefix reports whether a word before * is long enough to be a prefix and not a
// Chinese, Japanese or Korean bigram.
func queryIsPrefix(w string) bool {
	first, _ := utf8.DecodeRuneInString(w)
	return !wordIsCJK(first) && utf8.RuneCountInString(w) >= MinPrefixRunes
}

// phrase requires words in sequence: a lone word itself, else the pairs of adjacent words.
func (p *queryParser) phrase(words []string) {
	if len(words) == 1 {
		p.add(&p.q.Terms, words[0])
	}
	for i := 1; i < len(words); i++ {
		p.add(&p.q.Terms, words[i-1]+PairSeparator+words[i])
	}
}

func (p *queryParser) add(list *[]string, term string) {
	key := term
	if list == &p.q.Prefixes {
		key = "*" + term
	}
	if p.seen[key] {
		return
	}
	if p.seen == nil {
		p.seen = make(map[string]bool)
	}
	p.seen[key] = true
	*list = append(*list, term)
}

func queryWords(text string) []string {
	var words []string
	Words(text, func(w string) { words = append(words, w) })
	return words
}
