package main

import (
	"slices"
	"strings"

	"github.com/mailledger/mailledger/analyzer"
)

// tokenFilter says which terms an index keeps; nil keeps all of them.
type tokenFilter func(term string) bool

// answers returns, for every filter, the ids each query must return from an index that
// keeps the terms the filter keeps: a message matches when it holds every term of the
// query and, for every prefix, a term beginning with it. It reads the first n messages
// once, keeping the postings of the queried terms and prefixes only. The ids are
// ascending.
func answers(c *corpus, n int, queries []benchQuery, filters ...tokenFilter) [][][]int64 {
	post := make([]postings, len(filters))
	for f := range post {
		post[f] = newPostings(queries)
	}
	var set analyzer.TermSet
	for i := range n {
		id := int64(i + 1)
		for _, t := range c.terms(i, &set) {
			for f, keep := range filters {
				if keep == nil || keep(t) {
					post[f].add(t, id)
				}
			}
		}
	}
	out := make([][][]int64, len(filters))
	for f, p := range post {
		out[f] = make([][]int64, len(queries))
		for k, bq := range queries {
			out[f][k] = p.match(bq.q)
		}
	}
	return out
}

// postings holds the ids of the messages holding each queried term, and those holding a
// term that begins with each queried prefix.
type postings struct {
	terms, prefixes map[string][]int64
	prefixLens      []int // the byte lengths of the queried prefixes
}

func newPostings(queries []benchQuery) postings {
	p := postings{terms: map[string][]int64{}, prefixes: map[string][]int64{}}
	for _, bq := range queries {
		for _, t := range bq.q.Terms {
			p.terms[t] = nil
		}
		for _, x := range bq.q.Prefixes {
			p.prefixes[x] = nil
			if !slices.Contains(p.prefixLens, len(x)) {
				p.prefixLens = append(p.prefixLens, len(x))
			}
		}
	}
	return p
}

// add records that message id holds term t; ids come in ascending order.
func (p postings) add(t string, id int64) {
	if ids, ok := p.terms[t]; ok {
		p.terms[t] = append(ids, id)
	}
	for _, l := range p.prefixLens {
		if len(t) < l {
			continue
		}
		if ids, ok := p.prefixes[t[:l]]; ok && (len(ids) == 0 || ids[len(ids)-1] != id) {
			p.prefixes[t[:l]] = append(ids, id)
		}
	}
}

// match intersects the postings of q's terms and prefixes.
func (p postings) match(q analyzer.Query) []int64 {
	var lists [][]int64
	for _, t := range q.Terms {
		lists = append(lists, p.terms[t])
	}
	for _, x := range q.Prefixes {
		lists = append(lists, p.prefixes[x])
	}
	out := slices.Clone(lists[0])
	for _, l := range lists[1:] {
		out = intersect(out, l)
	}
	return out
}

// intersect returns the ids in both ascending lists.
func intersect(a, b []int64) []int64 {
	var out []int64
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// ftsToken is a term as the SQLite FTS5 index and the InnoDB FULLTEXT alternative store
// it: a pair's space written as '_' (archive/search.go, ftsPairJoin).
func ftsToken(t string) string { return strings.ReplaceAll(t, analyzer.PairSeparator, "_") }
