package analyzer

import "strings"

// TermSet gathers the distinct index terms of a message's texts, each text on its own (no
// pair joins two texts). The zero TermSet is ready for use; it is not safe for concurrent
// use.
type TermSet struct {
	// MaxBytes bounds the total length in bytes of the distinct terms (0: no bound). Terms
	// past it are dropped and Truncated reports it: an index stores a bounded document
	// (PostgreSQL's tsvector holds less than 1 MB) and flags the message.
	MaxBytes  int
	seen      map[string]struct{}
	terms     []string
	pair      []byte
	size      int
	truncated bool
}

// Add adds the terms of text (AppendTerms) not yet in the set.
func (s *TermSet) Add(text string) {
	if s.seen == nil {
		s.seen = make(map[string]struct{})
	}
	prev := ""
	Words(text, func(w string) {
		if _, ok := s.seen[w]; !ok {
			s.add(strings.Clone(w)) // the set must not keep the text's memory alive
		}
		if prev != "" {
			s.pair = append(append(append(s.pair[:0], prev...), PairSeparator...), w...)
			if _, ok := s.seen[string(s.pair)]; !ok {
				s.add(string(s.pair))
			}
		}
		prev = w
	})
}

func (s *TermSet) add(term string) {
	if s.MaxBytes > 0 && s.size+len(term) > s.MaxBytes {
		s.truncated = true
		return
	}
	s.seen[term] = struct{}{}
	s.terms = append(s.terms, term)
	s.size += len(term)
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
}
