package main

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/mailledger/mailledger/analyzer"
)

// Shape of the generated messages. Only their index terms are generated: the layouts
// store nothing else.
const (
	subjectWords  = 5    // words of a subject, on average (3 to 7)
	syllableBase  = 30   // a word of rank r has about 1 + log_30(r+1) syllables
	maxSyllables  = 6    // the longest words
	shortestWords = 10   // the most frequent words have one syllable
	genSalt       = 0x1a // mixed into the seed of every message's random source
)

// corpus makes the term lists of the benchmark: message i is the same on every call, run
// and database, drawn from a random source seeded with the corpus seed and i alone.
type corpus struct {
	words []string // the vocabulary by rank: words[0] is the most frequent
	seed  uint64
	zipfS float64
	mean  int // words of a message (subject and body), on average
}

func newCorpus(seed uint64, vocabulary int, zipfS float64, meanWords int) *corpus {
	return &corpus{words: vocabularyByRank(rand.New(rand.NewPCG(seed, 0)), vocabulary),
		seed: seed, zipfS: zipfS, mean: meanWords}
}

// vocabularyByRank returns n distinct made-up words of consonant-vowel syllables, shorter
// the more frequent, as in real text: the first ten have one syllable (most of them two
// letters long), the next few dozen one to three, the rare ones four or five. No stemmer, dictionary or stop-word list
// knows them, except by chance a short one (InnoDB's "be", "de", "la", "to").
func vocabularyByRank(rng *rand.Rand, n int) []string {
	const consonants, vowels = "bdfgklmnprstvz", "aeiou"
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	var b strings.Builder
	for len(out) < n {
		r := len(out)
		syl := 1 + int(math.Log(float64(r+1))/math.Log(syllableBase))
		if r >= shortestWords {
			syl += rng.IntN(2)
		}
		b.Reset()
		for range min(syl, maxSyllables) {
			b.WriteByte(consonants[rng.IntN(len(consonants))])
			b.WriteByte(vowels[rng.IntN(len(vowels))])
			if rng.IntN(4) == 0 {
				b.WriteByte(consonants[rng.IntN(len(consonants))])
			}
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// text returns the subject and body of message i: 3 to 7 subject words and a body that
// brings the message to about c.mean words, drawn with Zipf frequencies.
func (c *corpus) text(i int) (subject, body []string) {
	rng := rand.New(rand.NewPCG(c.seed^genSalt, uint64(i)))
	zipf := rand.NewZipf(rng, c.zipfS, 1, uint64(len(c.words)-1))
	draw := func(n int) []string {
		out := make([]string, n)
		for k := range out {
			out[k] = c.words[zipf.Uint64()]
		}
		return out
	}
	subject = draw(subjectWords - 2 + rng.IntN(5))
	bodyMean := max(c.mean-subjectWords, 1)
	return subject, draw(bodyMean/2 + rng.IntN(bodyMean+1))
}

// terms returns the distinct index terms of message i as the archive makes them: an
// analyzer.TermSet over the subject and the body, each a text of its own. set is reused.
func (c *corpus) terms(i int, set *analyzer.TermSet) []string {
	subject, body := c.text(i)
	set.Reset()
	set.Add(strings.Join(subject, " "))
	set.Add(strings.Join(body, " "))
	return append([]string(nil), set.Terms()...)
}

// message is one message's id and terms, as the layouts store them, and its words with
// their positions for a layout that keeps them (analyzer.TermSet.Positioned).
type message struct {
	id         int64
	terms      []string
	positioned analyzer.Positioned
}

// batch returns the messages from to to-1; message i has id i+1.
func (c *corpus) batch(from, to int) []message {
	var set analyzer.TermSet
	out := make([]message, 0, to-from)
	for i := from; i < to; i++ {
		terms := c.terms(i, &set)
		out = append(out, message{id: int64(i + 1), terms: terms, positioned: set.Positioned()})
	}
	return out
}
