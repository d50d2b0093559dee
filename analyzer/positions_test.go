package analyzer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func wordPositions(p Positioned) map[string][]uint16 {
	out := map[string][]uint16{}
	for _, w := range p.Words {
		out[w.Word] = w.Positions
	}
	return out
}

// Rule 1: words are numbered from 1, and a text after another begins after a gap.
func TestPositionedNumbersWordsWithAGapBetweenTexts(t *testing.T) {
	var s TermSet
	s.Add("a b a")
	s.Add("c d")
	p := s.Positioned()
	assert.Equal(t, map[string][]uint16{"a": {1, 3}, "b": {2}, "c": {5}, "d": {6}}, wordPositions(p))
	assert.Empty(t, p.Pairs, "every pair has an occurrence with both positions kept")
}

// Rules 2 and 4: past MaxPosition and past MaxWordPositions nothing is kept; a word with
// nothing kept is parked, and the pairs left uncovered are terms.
func TestPositionedParksWordsAndKeepsUncoveredPairs(t *testing.T) {
	var s TermSet
	s.Add(strings.Repeat("x ", MaxPosition-1) + "a b c")
	p := s.Positioned()
	pos := wordPositions(p)
	require.Len(t, pos["x"], MaxWordPositions)
	assert.Equal(t, []uint16{MaxPosition}, pos["a"], "a is at the last position kept")
	assert.Equal(t, []uint16{ParkedPosition}, pos["b"], "b is past it: parked")
	assert.Equal(t, []uint16{ParkedPosition}, pos["c"])
	assert.ElementsMatch(t, []string{"x a", "a b", "b c"}, p.Pairs,
		"x's occurrence before a is past its 256th; b is not kept")
}

// Rules 3 and 4 over random texts: a pair is found through positions (a at p, b at p+1)
// or as a term exactly when the terms hold it, and every word has a position.
func TestPositionedFindsExactlyThePairsOfTheTerms(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 16))
	vocab := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for round := range 12 {
		s := TermSet{MaxBytes: []int{0, 12, 40}[round%3]}
		for range 1 + rng.IntN(3) {
			n := []int{3, 300, 9000}[rng.IntN(3)]
			text := make([]string, n)
			for k := range text {
				text[k] = vocab[rng.IntN(len(vocab))]
			}
			s.Add(strings.Join(text, " "))
		}
		terms := s.Terms()
		p := s.Positioned()
		pos := wordPositions(p)
		for _, a := range vocab {
			assert.Equal(t, slices.Contains(terms, a), pos[a] != nil, "round %d: word %q", round, a)
			for _, b := range vocab {
				pair := a + PairSeparator + b
				assert.Equal(t, slices.Contains(terms, pair), adjacent(pos[a], pos[b]) || slices.Contains(p.Pairs, pair),
					"round %d: pair %q", round, pair)
			}
		}
	}
}

// adjacent reports whether some position of b follows one of a.
func adjacent(a, b []uint16) bool {
	for _, p := range a {
		if slices.Contains(b, p+1) {
			return true
		}
	}
	return false
}
