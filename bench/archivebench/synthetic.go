package main

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"time"

	"github.com/mailledger/mailledger/archive/archivetest"
)

// Shape of the generated archive.
const (
	vocabulary   = 3000 // distinct words of subjects and bodies
	zipfS        = 1.1  // word frequencies follow Zipf's law with this exponent
	domains      = 20   // the addresses are spread over this many domains
	archiveYears = 2    // sent dates spread over this many years
)

// archiveStart is the first sent date of the generated archive.
var archiveStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// synthetic describes the generated archive: its words, its addresses and its time span.
// Message i is the same on every call and every database: it is made from a random
// source seeded with i.
type synthetic struct {
	words []string
	addrs []string
	span  time.Duration
}

func newSynthetic(addresses int) *synthetic {
	rng := rand.New(rand.NewSource(1))
	return &synthetic{words: pseudoWords(rng, vocabulary), addrs: addressPool(addresses),
		span: time.Duration(archiveYears) * 365 * 24 * time.Hour}
}

// pseudoWords returns n distinct made-up words of two to four syllables: no stemming,
// stop-word list or dictionary of any engine treats them specially.
func pseudoWords(rng *rand.Rand, n int) []string {
	const consonants, vowels = "bdfgklmnprstvz", "aeiou"
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for range 2 + rng.Intn(3) {
			b.WriteByte(consonants[rng.Intn(len(consonants))])
			b.WriteByte(vowels[rng.Intn(len(vowels))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func addressPool(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("user%04d@dept%02d.example.com", i, i%domains)
	}
	return out
}

// genMessage is one generated message and what the generator knows about it.
type genMessage struct {
	raw     []byte
	from    string
	rcpts   []string // To and Cc
	words   []string // of the subject and the body
	sent    time.Time
	arrived time.Time
}

// message returns message i: a sender and one to three To recipients (sometimes a Cc)
// from the address pool, a subject of three to seven words and a body of 50 to 150 words
// drawn with Zipf frequencies, sent at a random time in the archive's span and arrived
// up to ten minutes later.
func (s *synthetic) message(i int) genMessage {
	rng := rand.New(rand.NewSource(int64(i) + 1000))
	zipf := rand.NewZipf(rng, zipfS, 1, uint64(len(s.words)-1))
	var m genMessage
	text := func(n int) string {
		w := make([]string, n)
		for k := range w {
			w[k] = s.words[zipf.Uint64()]
		}
		m.words = append(m.words, w...)
		return strings.Join(w, " ")
	}
	pick := func(n int) []string {
		out := make([]string, n)
		for k := range out {
			out[k] = s.addrs[rng.Intn(len(s.addrs))]
		}
		return out
	}
	m.from = s.addrs[rng.Intn(len(s.addrs))]
	to, cc := pick(1+rng.Intn(3)), pick(rng.Intn(2))
	m.rcpts = append(append(m.rcpts, to...), cc...)
	m.sent = archiveStart.Add(time.Duration(rng.Int63n(int64(s.span)))).Truncate(time.Second)
	m.arrived = m.sent.Add(time.Duration(rng.Intn(600)) * time.Second)
	subject := text(3 + rng.Intn(5))
	body := fmt.Sprintf("message %d\r\n%s", i, text(50+rng.Intn(101)))
	m.raw = archivetest.Message(m.from, to, cc, subject, body, m.sent)
	return m
}

// matches says whether q should find m.
func (q benchQuery) matches(m genMessage) bool {
	return (q.text == "" || slices.Contains(m.words, q.text)) &&
		(q.from == "" || m.from == q.from) &&
		(q.to == "" || slices.Contains(m.rcpts, q.to)) &&
		(q.dateFrom.IsZero() || !m.sent.Before(q.dateFrom)) &&
		(q.dateTo.IsZero() || m.sent.Before(q.dateTo))
}

// Query kinds of the search benchmark.
const (
	kindWord      = "word"
	kindSender    = "sender"
	kindRecipient = "recipient"
	kindDates     = "date range"
	kindWordDates = "word + date range"
)

var queryKinds = []string{kindWord, kindSender, kindRecipient, kindDates, kindWordDates}

// dateWindow is the width of the date-range queries.
const dateWindow = 30 * 24 * time.Hour

// benchQuery is one timed search.
type benchQuery struct {
	kind             string
	text, from, to   string
	dateFrom, dateTo time.Time
	latency          time.Duration
	total            int // matches, as Search counts them
	returned         int // messages on the page
}

// queries returns perKind queries of every kind in random order: words drawn uniformly
// from the vocabulary (so that common and rare words are both asked for), senders and
// recipients uniformly from the address pool, 30-day windows anywhere in the span.
func (s *synthetic) queries(perKind int) []benchQuery {
	rng := rand.New(rand.NewSource(2))
	window := func() (time.Time, time.Time) {
		from := archiveStart.Add(time.Duration(rng.Int63n(int64(s.span - dateWindow)))).Truncate(24 * time.Hour)
		return from, from.Add(dateWindow)
	}
	var out []benchQuery
	for _, kind := range queryKinds {
		for range perKind {
			q := benchQuery{kind: kind}
			switch kind {
			case kindWord:
				q.text = s.words[rng.Intn(len(s.words))]
			case kindSender:
				q.from = s.addrs[rng.Intn(len(s.addrs))]
			case kindRecipient:
				q.to = s.addrs[rng.Intn(len(s.addrs))]
			case kindDates:
				q.dateFrom, q.dateTo = window()
			case kindWordDates:
				q.text = s.words[rng.Intn(len(s.words))]
				q.dateFrom, q.dateTo = window()
			}
			out = append(out, q)
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
