package main

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mailledger/mailledger/analyzer"
)

// Query kinds, in report order.
const (
	kindRare   = "rare word"
	kindMedium = "medium word"
	kindCommon = "common word"
	kindAnd    = "rare AND common"
	kindPair   = "pair"
	kindPrefix = "prefix"
)

var queryKinds = []string{kindRare, kindMedium, kindCommon, kindAnd, kindPair, kindPrefix}

// Document frequencies of the word classes: a rare word is in 1 to rareMax messages, a
// medium one in about 1 % (0.5 to 2 %), a common one in about 30 % (20 to 40 %). When a
// class is empty (a small corpus), the nearestWords words nearest its target stand in.
const (
	rareMax      = 5
	nearestWords = 10
)

// benchQuery is one query of the benchmark: the terms and prefixes a message must hold.
type benchQuery struct {
	kind string
	q    analyzer.Query
}

func (b benchQuery) String() string {
	parts := slices.Clone(b.q.Terms)
	for _, p := range b.q.Prefixes {
		parts = append(parts, p+"*")
	}
	return strings.Join(parts, " AND ")
}

// wordFreq holds the document frequency of every word of the corpus (pairs excluded).
type wordFreq map[string]int

// corpusStats describes the term lists of the corpus.
type corpusStats struct {
	df          wordFreq
	postings    int         // (message, term) pairs, words and pairs
	pairLengths map[int]int // (message, pair) pairs by the pair's length in characters
}

// countWords reads the first n messages and counts the messages each word is in.
func countWords(c *corpus, n int) corpusStats {
	s := corpusStats{df: wordFreq{}, pairLengths: map[int]int{}}
	var set analyzer.TermSet
	for i := range n {
		for _, t := range c.terms(i, &set) {
			s.postings++
			if strings.Contains(t, analyzer.PairSeparator) {
				s.pairLengths[utf8.RuneCountInString(t)]++
			} else {
				s.df[t]++
			}
		}
	}
	return s
}

// class returns the words whose frequency is in [lo, hi], or the nearestWords words
// nearest target when none is, sorted.
func (df wordFreq) class(lo, hi, target int) []string {
	var in, all []string
	for w, d := range df {
		all = append(all, w)
		if d >= lo && d <= hi {
			in = append(in, w)
		}
	}
	if len(in) > 0 {
		slices.Sort(in)
		return in
	}
	dist := func(w string) int { return max(df[w]-target, target-df[w]) }
	slices.SortFunc(all, func(a, b string) int { return cmp.Or(cmp.Compare(dist(a), dist(b)), strings.Compare(a, b)) })
	all = all[:min(nearestWords, len(all))]
	slices.Sort(all)
	return all
}

// drawQueries returns perKind queries of every kind over the first n messages, in a
// random order fixed by seed: words drawn uniformly from their class, pairs and prefixes
// (the first three characters of a word of at least three) from the text of random
// messages, so as often as they occur.
func drawQueries(c *corpus, n, perKind int, seed uint64, df wordFreq) []benchQuery {
	rng := rand.New(rand.NewPCG(seed, 2))
	rare := df.class(1, rareMax, 1)
	medium := df.class(max(n/200, 1), max(n/50, 1), max(n/100, 1))
	common := df.class(n/5, 2*n/5, 3*n/10)
	pick := func(ws []string) string { return ws[rng.IntN(len(ws))] }
	var out []benchQuery
	add := func(kind string, terms, prefixes []string) {
		out = append(out, benchQuery{kind: kind, q: analyzer.Query{Terms: terms, Prefixes: prefixes}})
	}
	for range perKind {
		add(kindRare, []string{pick(rare)}, nil)
		add(kindMedium, []string{pick(medium)}, nil)
		add(kindCommon, []string{pick(common)}, nil)
		add(kindAnd, []string{pick(rare), pick(common)}, nil)
		add(kindPair, []string{c.pairIn(rng, n)}, nil)
		add(kindPrefix, nil, []string{c.prefixIn(rng, n)})
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// pairIn returns a pair of adjacent words of the body of a random message.
func (c *corpus) pairIn(rng *rand.Rand, n int) string {
	for {
		_, body := c.text(rng.IntN(n))
		if len(body) >= 2 {
			k := rng.IntN(len(body) - 1)
			return body[k] + analyzer.PairSeparator + body[k+1]
		}
	}
}

// prefixIn returns the first analyzer.MinPrefixRunes characters of a random word of at
// least that many in the body of a random message.
func (c *corpus) prefixIn(rng *rand.Rand, n int) string {
	for {
		_, body := c.text(rng.IntN(n))
		w := body[rng.IntN(len(body))]
		if utf8.RuneCountInString(w) < analyzer.MinPrefixRunes {
			continue
		}
		end := 0
		for range analyzer.MinPrefixRunes {
			_, size := utf8.DecodeRuneInString(w[end:])
			end += size
		}
		return w[:end]
	}
}
