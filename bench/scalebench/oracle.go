package main

import (
	"math/rand/v2"
	"slices"

	"github.com/mailledger/mailledger/archive"
)

// wordSet is the vocabulary words the queries ask for, by rank, chosen once from the
// generator's frequencies (see newWordSet). Only these words are counted by the oracle.
type wordSet struct {
	common []int32       // in most messages: ranks 5 to 14
	rare   []int32       // in about 5 messages in 100,000: spread over the last half of the ranks
	pairs  [][2]int32    // a frequent word (ranks 5 to 59) with a less frequent one (60 to 999)
	dated  []int32       // asked with a date window: ranks 5 to 199
	slot   map[int32]int // every word of the set: its index in counts.word
}

// Sizes of the word set.
const (
	commonWords = 10
	rareWords   = 20
	wordPairs   = 20
	datedWords  = 20
)

func newWordSet() *wordSet {
	rng := rand.New(rand.NewPCG(3, 4))
	s := &wordSet{slot: map[int32]int{}}
	for k := range commonWords {
		s.common = append(s.common, int32(5+k))
	}
	for k := range rareWords {
		s.rare = append(s.rare, int32(vocabulary/2+k*(vocabulary/2/rareWords)+rng.IntN(vocabulary/2/rareWords)))
	}
	for range wordPairs {
		s.pairs = append(s.pairs, [2]int32{int32(5 + rng.IntN(55)), int32(60 + rng.IntN(940))})
	}
	for range datedWords {
		s.dated = append(s.dated, int32(5+rng.IntN(195)))
	}
	for _, w := range s.all() {
		if _, ok := s.slot[w]; !ok {
			s.slot[w] = len(s.slot)
		}
	}
	return s
}

// all lists every word of the set, repeats included.
func (s *wordSet) all() []int32 {
	out := slices.Concat(s.common, s.rare, s.dated)
	for _, p := range s.pairs {
		out = append(out, p[0], p[1])
	}
	return out
}

// scopeCount is what an erasure of one address affects, as Archive.Scope counts it.
type scopeCount struct{ sender, recipient, affected, attachments int32 }

func (c scopeCount) scope() archive.Scope {
	return archive.Scope{AsSender: int(c.sender), AsRecipient: int(c.recipient), Attachments: int(c.attachments), Affected: int(c.affected)}
}

// counts is the oracle: what the first messages generated contain, counted where it is
// cheap to count, so that every query's total and every assessment can be checked.
type counts struct {
	messages   int
	day        []int32      // messages sent on each day
	from       []int32      // messages sent by each address
	rcptDomain []int32      // messages with a To or Cc recipient at each domain
	scope      []scopeCount // per address
	word       []int32      // per word of the set (by slot), messages holding it
	datedDay   [][]int32    // per dated word (by index), messages holding it per day
	pair       []int32      // per pair of the set, messages holding both words
}

func newCounts(ws *wordSet) *counts {
	c := &counts{day: make([]int32, archiveDays), from: make([]int32, addressCount),
		rcptDomain: make([]int32, domainCount), scope: make([]scopeCount, addressCount),
		word: make([]int32, len(ws.slot)), datedDay: make([][]int32, len(ws.dated)), pair: make([]int32, len(ws.pairs))}
	for i := range c.datedDay {
		c.datedDay[i] = make([]int32, archiveDays)
	}
	return c
}

// add counts message m, whose words are looked up in ws.
func (c *counts) add(g *generator, ws *wordSet, m *message) {
	c.messages++
	day := m.day()
	c.day[day]++
	c.from[m.sender]++
	att := int32(m.attachments())
	c.scope[m.sender].sender++
	c.scope[m.sender].affected++
	c.scope[m.sender].attachments += att
	domains := map[int]bool{}
	for _, r := range m.rcpts() {
		c.scope[r].recipient++
		c.scope[r].affected++
		c.scope[r].attachments += att
		domains[g.addrs[r].domain] = true
	}
	for d := range domains {
		c.rcptDomain[d]++
	}
	present := make([]bool, len(ws.slot))
	for _, w := range m.words {
		if s, ok := ws.slot[w]; ok {
			present[s] = true
		}
	}
	for s, ok := range present {
		if ok {
			c.word[s]++
		}
	}
	for k, w := range ws.dated {
		if present[ws.slot[w]] {
			c.datedDay[k][day]++
		}
	}
	for k, p := range ws.pairs {
		if present[ws.slot[p[0]]] && present[ws.slot[p[1]]] {
			c.pair[k]++
		}
	}
}

// clone returns a copy that later adds leave unchanged: about 250 KB, kept for each step.
func (c *counts) clone() *counts {
	out := *c
	out.day, out.from, out.rcptDomain = slices.Clone(c.day), slices.Clone(c.from), slices.Clone(c.rcptDomain)
	out.scope, out.word, out.pair = slices.Clone(c.scope), slices.Clone(c.word), slices.Clone(c.pair)
	out.datedDay = make([][]int32, len(c.datedDay))
	for i, d := range c.datedDay {
		out.datedDay[i] = slices.Clone(d)
	}
	return &out
}

// sum adds the counts of days from to to-1.
func sum(days []int32, from, to int) int {
	n := 0
	for _, v := range days[from:to] {
		n += int(v)
	}
	return n
}
