package analyzer

import "strings"

// TermSet gathers the distinct index terms of a message's texts, each text on its own (no
// pair joins two texts), and the positions of their words (positions.go). The zero TermSet
// is ready for use; it is not safe for concurrent use.
type TermSet struct {
	// MaxBytes bounds the total length in bytes of the distinct terms (0: no bound). Terms
	// past it are dropped and Truncated reports it: an index stores a bounded document
	// (PostgreSQL's tsvector holds less than 1 MB) and flags the message.
	MaxBytes  int
	seen      map[string]int // term → its index in terms
	terms     []string
	pair      []byte
	size      int
	truncated bool
	positions termPositions
}

// Add adds the terms of text (AppendTerms) not yet in the set.
func (s *TermSet) Add(text string) {
	if s.seen == nil {
		s.seen = make(map[string]int)
	}
	prev, prevKept := "", false
	s.positions.startText()
	Words(text, func(w string) {
		word, ok := s.seen[w]
		if !ok {
			word = s.add(strings.Clone(w)) // the set must not keep the text's memory alive
		}
		pair := -1
		if prev != "" {
			s.pair = append(append(append(s.pair[:0], prev...), PairSeparator...), w...)
			if pair, ok = s.seen[string(s.pair)]; !ok {
				pair = s.add(string(s.pair))
			}
		}
		prevKept = s.positions.record(word, pair, prevKept, s.truncated)
		prev = w
	})
}

// add adds term and returns its index in terms, or -1 when it is dropped for MaxBytes.
func (s *TermSet) add(term string) int {
	if s.MaxBytes > 0 && s.size+len(term) > s.MaxBytes {
		s.truncated = true
		return -1
	}
	s.seen[term] = len(s.terms)
	s.terms = append(s.terms, term)
	s.size += len(term)
	s.positions.grow(len(s.terms))
	return len(s.terms) - 1
}

// Truncated reports whether terms were dropped to keep within MaxBytes.
func (s *TermSet) Truncated() bool { return s.truncated }

// Terms returns the distinct terms in the order they were first seen. The slice belongs to
// the set until Reset.
func (s *TermSet) Terms() []string { return s.terms }

// Len returns the number of distinct terms.
func (s *TermSet) Len() int { return len(s.terms) }

// Reset empties the set, keeping its memory for the next message.
func (s *TermSet) Reset() {
	clear(s.seen)
	s.terms = s.terms[:0]
	s.size, s.truncated = 0, false
	s.positions.reset()
}
