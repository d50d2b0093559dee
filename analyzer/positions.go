package analyzer

import "strings"

// Positions: an index that keeps where each word occurs (PostgreSQL's tsvector) can find a
// pair "a b" as "a at some position p and b at p+1" instead of storing the pair as a term
// of its own. TermSet.Positioned gives such an index the same answers as the terms:
//
//  1. The words of a message are numbered from 1 in the order Add read them; each text
//     after the first begins one position later than it would (a gap), so no two words
//     of different texts are adjacent, as no pair joins two texts.
//  2. A word keeps at most MaxWordPositions positions, the first ones, and none past
//     MaxPosition (PostgreSQL clamps positions to 16,383 and keeps 256 per lexeme).
//     A word with no position kept (all its occurrences past MaxPosition) gets
//     ParkedPosition, which no kept position is next to: MaxPosition+1 stays empty.
//  3. Positions are kept only while no term has been dropped for MaxBytes, so two adjacent
//     kept positions always stand for a pair the terms hold.
//  4. A pair is covered when some occurrence of it has both positions kept; the pairs not
//     covered (an occurrence past the limits only) are stored as terms, as every other
//     index stores every pair. A pair (a, b) is then found by "a next to b, or the term
//     'a b'": never a pair the terms do not hold, never one they hold missed.

// MaxPosition is the last position a word keeps (rule 2).
const MaxPosition = 16381

// ParkedPosition is the position of a word whose occurrences are all past MaxPosition.
const ParkedPosition = MaxPosition + 2

// MaxWordPositions bounds the positions one word keeps (rule 2).
const MaxWordPositions = 256

// WordPositions is one word of a message and the positions it keeps.
type WordPositions struct {
	Word string
	// Positions are ascending, 1 to MaxPosition, or ParkedPosition alone.
	Positions []uint16
}

// Positioned is a message's terms for an index that keeps positions: its words with their
// positions, and the pairs no two kept positions cover (rule 4).
type Positioned struct {
	Words []WordPositions
	Pairs []string
}

type posRecord struct {
	term int32
	pos  uint16
}

// termPositions records positions as TermSet reads words, for every term by its index.
type termPositions struct {
	last    int // position of the last word read (0: none yet)
	records []posRecord
	count   []uint16 // by term: positions kept
	covered []bool   // by term: a pair with an occurrence whose positions are both kept
}

// startText leaves a gap before a text that follows another (rule 1).
func (p *termPositions) startText() {
	if p.last > 0 {
		p.last++
	}
}

// grow makes room for the terms up to n.
func (p *termPositions) grow(n int) {
	for len(p.count) < n {
		p.count, p.covered = append(p.count, 0), append(p.covered, false)
	}
	p.count[n-1], p.covered[n-1] = 0, false
}

// record numbers the next word (its term index, -1 when dropped) and reports whether its
// position is kept; pair is the index of the pair it ends (-1: none or dropped), prevKept
// whether the word before it kept its position, truncated whether a term has been dropped.
func (p *termPositions) record(word, pair int, prevKept, truncated bool) bool {
	p.last++
	kept := word >= 0 && !truncated && p.last <= MaxPosition && p.count[word] < MaxWordPositions
	if !kept {
		return false
	}
	p.count[word]++
	p.records = append(p.records, posRecord{term: int32(word), pos: uint16(p.last)})
	if prevKept && pair >= 0 {
		p.covered[pair] = true
	}
	return true
}

func (p *termPositions) reset() {
	p.last = 0
	p.records = p.records[:0]
	p.count, p.covered = p.count[:0], p.covered[:0]
}

// Positioned returns the set's words with their positions and its uncovered pairs (the
// rules above), in the order the terms were first seen. The result is the caller's.
func (s *TermSet) Positioned() Positioned {
	p := &s.positions
	var out Positioned
	start := make([]int, len(s.terms)) // by word: its first position in flat
	words := 0
	n := 0
	for i, t := range s.terms {
		if strings.Contains(t, PairSeparator) {
			if !p.covered[i] {
				out.Pairs = append(out.Pairs, t)
			}
			continue
		}
		start[i] = n
		n += max(int(p.count[i]), 1)
		words++
	}
	flat := make([]uint16, n)
	fill := make([]int, len(s.terms))
	for _, r := range p.records {
		flat[start[r.term]+fill[r.term]] = r.pos
		fill[r.term]++
	}
	out.Words = make([]WordPositions, 0, words)
	for i, t := range s.terms {
		if strings.Contains(t, PairSeparator) {
			continue
		}
		k := max(int(p.count[i]), 1)
		pos := flat[start[i] : start[i]+k : start[i]+k]
		if p.count[i] == 0 {
			pos[0] = ParkedPosition
		}
		out.Words = append(out.Words, WordPositions{Word: t, Positions: pos})
	}
	return out
}
