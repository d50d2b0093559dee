package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// Shape of the generated archive.
const (
	addressCount = 5000    // senders and recipients
	domainCount  = 200     // the addresses' domains: address k is at domain k mod domainCount
	addressSkew  = 0.88    // address k is drawn with weight (k+1)^-addressSkew
	vocabulary   = 200_000 // distinct made-up words of subjects and bodies
	wordSkew     = 1.1     // word frequencies follow Zipf's law with this exponent
	archiveDays  = 5 * 365 // sent dates spread over five years from archiveStart
)

// archiveStart is the first sent date of the generated archive.
var archiveStart = time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)

// address is one sender or recipient of the pool.
type address struct {
	addr   string
	name   string // display name, "" for a bare address
	domain int    // index into generator.domains
}

// generator makes the archive: message i is the same on every call, run and database,
// as it is drawn from a random source seeded with i alone.
type generator struct {
	domains []string
	addrs   []address
	cum     []float64 // cumulative address weights
	words   []string  // by rank: words[0] is the most frequent
	// inOrder, when > 0, dates message i in the i-th of inOrder equal slots of the five
	// years (mail in date order, as over SMTP); 0 dates each at random over them.
	inOrder int
}

func newGenerator() *generator {
	g := &generator{domains: domainNames()}
	g.addrs = addressPool(g.domains)
	total := 0.0
	for k := range g.addrs {
		total += math.Pow(float64(k+1), -addressSkew)
		g.cum = append(g.cum, total)
	}
	g.words = pseudoWords(rand.New(rand.NewPCG(1, 2)), vocabulary, reservedTokens(g.addrs))
	return g
}

// domainNames returns domainCount domains, each of a company and a country or kind.
func domainNames() []string {
	out := make([]string, domainCount)
	for d := range out {
		out[d] = companies[d%len(companies)] + "." + domainTails[(d/len(companies))%len(domainTails)]
	}
	return out
}

// addressPool returns addressCount distinct addresses made of names, three in four with
// that name as display name.
func addressPool(domains []string) []address {
	seen := map[string]bool{}
	out := make([]address, addressCount)
	for k := range out {
		first, last := firstNames[k%len(firstNames)], lastNames[(k/len(firstNames))%len(lastNames)]
		f, l := localPart(first), localPart(last)
		local := [...]string{f + "." + l, f[:1] + l, f + "_" + l, l + "." + f}[(k/(len(firstNames)*len(lastNames)))%4]
		a := address{domain: k % len(domains)}
		a.addr = local + "@" + domains[a.domain]
		for n := 2; seen[a.addr]; n++ {
			a.addr = fmt.Sprintf("%s%d@%s", local, n, domains[a.domain])
		}
		seen[a.addr] = true
		if k%4 != 3 {
			a.name = first + " " + last
		}
		out[k] = a
	}
	return out
}

// localPart is a name as the local part of an address: folded to ASCII lower case,
// letters and digits only.
func localPart(name string) string {
	return strings.Join(tokens(name), "")
}

// pseudoWords returns n distinct made-up words of two to four consonant-vowel syllables,
// none of them a reserved token: no stemming, stop-word list or dictionary of any engine
// treats them specially, and no name, address or fixed text contains them.
func pseudoWords(rng *rand.Rand, n int, reserved map[string]bool) []string {
	const consonants, vowels = "bdfgklmnprstvz", "aeiou"
	seen := map[string]bool{}
	out := make([]string, 0, n)
	var b strings.Builder
	for len(out) < n {
		b.Reset()
		for range 2 + rng.IntN(3) {
			b.WriteByte(consonants[rng.IntN(len(consonants))])
			b.WriteByte(vowels[rng.IntN(len(vowels))])
		}
		if w := b.String(); !seen[w] && !reserved[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// drawAddress returns an address index with the pool's skewed weights.
func (g *generator) drawAddress(rng *rand.Rand) int {
	k := sort.SearchFloat64s(g.cum, rng.Float64()*g.cum[len(g.cum)-1])
	return min(k, len(g.cum)-1)
}

// Message shapes: most are one text/plain part.
const (
	shapePlain       = iota
	shapeAlternative // multipart/alternative: text and HTML
	shapeAttachment  // multipart/mixed: text and a small text attachment
	shapeBoth        // multipart/mixed: an alternative and an attachment
)

// message is one generated message: what the oracle and the checks know of it, and its
// raw bytes.
type message struct {
	i       int
	sender  int
	to, cc  []int // distinct, never the sender
	sent    time.Time
	zone    *time.Location
	words   []int32 // vocabulary ranks of the subject and body, in order, repeated
	shape   int
	replyTo bool // a reply: "Re:" subject and a quoted paragraph
	raw     []byte
}

// day is the index of the UTC day the message was sent on, from archiveStart.
func (m *message) day() int { return int(m.sent.Sub(archiveStart) / (24 * time.Hour)) }

// attachments is the number of attachments the archive counts.
func (m *message) attachments() int {
	if m.shape == shapeAttachment || m.shape == shapeBoth {
		return 1
	}
	return 0
}

// hasWord says whether the subject or body holds the vocabulary word of rank w.
func (m *message) hasWord(w int32) bool {
	for _, x := range m.words {
		if x == w {
			return true
		}
	}
	return false
}

// rcpts are the To and Cc recipients.
func (m *message) rcpts() []int { return append(append([]int{}, m.to...), m.cc...) }

var zones = []*time.Location{
	time.UTC, time.FixedZone("", 3600), time.FixedZone("", 7200), time.FixedZone("", -5*3600),
	time.FixedZone("", -8*3600), time.FixedZone("", 5*3600+1800), time.FixedZone("", 9*3600),
}

// message returns message i.
func (g *generator) message(i int) *message {
	rng := rand.New(rand.NewPCG(uint64(i), 0x5ca1ebe9c4))
	m := &message{i: i, sender: g.drawAddress(rng)}
	taken := map[int]bool{m.sender: true}
	pick := func(n int) []int {
		out := make([]int, 0, n)
		for len(out) < n {
			if k := g.drawAddress(rng); !taken[k] {
				taken[k] = true
				out = append(out, k)
			}
		}
		return out
	}
	m.to = pick([]int{1, 1, 1, 1, 1, 2, 2, 2, 3, 4}[rng.IntN(10)])
	if rng.IntN(10) < 3 {
		m.cc = pick(1 + rng.IntN(2))
	}
	at := rng.Int64N(archiveDays * 86400) // drawn either way: the rest of the message is the same
	if g.inOrder > 0 {
		slot := max(archiveDays*86400/int64(g.inOrder), 1)
		at = min(int64(i)*archiveDays*86400/int64(g.inOrder)+at%slot, archiveDays*86400-1)
	}
	m.sent = archiveStart.Add(time.Duration(at) * time.Second)
	m.zone = zones[rng.IntN(len(zones))]
	switch r := rng.IntN(100); {
	case r < 78:
		m.shape = shapePlain
	case r < 88:
		m.shape = shapeAlternative
	case r < 96:
		m.shape = shapeAttachment
	default:
		m.shape = shapeBoth
	}
	m.replyTo = rng.IntN(10) < 3
	m.raw = g.render(rng, m)
	return m
}
