package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/mailledger/mailledger/archive"
)

// Search settings: the page size of every query, the offset of the deep-page kind and the
// width of the date windows.
const (
	pageSize   = 50
	deepOffset = 5000
	windowDays = 30
	tenant     = "default"
)

// The eight query kinds.
const (
	kindRare       = "rare word"
	kindCommon     = "common word"
	kindTwoWords   = "two words"
	kindFrom       = "from=address"
	kindToDomain   = "to=@domain"
	kindWindow     = "30-day window"
	kindWordWindow = "word + window"
	kindDeepPage   = "common, offset 5000"
)

var queryKinds = []string{kindRare, kindCommon, kindTwoWords, kindFrom, kindToDomain, kindWindow, kindWordWindow, kindDeepPage}

// query is one search: at most one of words (with pair), from and toDomain, and a day
// window [dayFrom, dayTo) when dayTo > 0.
type query struct {
	kind           string
	words          []int32 // vocabulary ranks, all required
	pair           int     // index into wordSet.pairs for kindTwoWords
	dated          int     // index into wordSet.dated for kindWordWindow
	from, toDomain int     // address and domain index, -1 when unused
	dayFrom, dayTo int
	offset         int
}

// newQueries returns perKind queries of every kind, drawn with a source seeded by seed
// (the same queries on every database), kinds interleaved.
func newQueries(ws *wordSet, perKind int, seed uint64) []query {
	rng := rand.New(rand.NewPCG(seed, 5))
	out := make([]query, 0, perKind*len(queryKinds))
	for range perKind {
		for _, kind := range queryKinds {
			out = append(out, drawQuery(rng, ws, kind))
		}
	}
	return out
}

func drawQuery(rng *rand.Rand, ws *wordSet, kind string) query {
	q := query{kind: kind, from: -1, toDomain: -1}
	window := func() {
		q.dayFrom = rng.IntN(archiveDays - windowDays + 1)
		q.dayTo = q.dayFrom + windowDays
	}
	switch kind {
	case kindRare:
		q.words = []int32{ws.rare[rng.IntN(len(ws.rare))]}
	case kindCommon:
		q.words = []int32{ws.common[rng.IntN(len(ws.common))]}
	case kindTwoWords:
		q.pair = rng.IntN(len(ws.pairs))
		q.words = ws.pairs[q.pair][:]
	case kindFrom:
		// log-uniform over the ranks: the heavy addresses are asked for as well as the rare
		q.from = min(int(math.Exp(rng.Float64()*math.Log(addressCount))), addressCount) - 1
	case kindToDomain:
		q.toDomain = rng.IntN(domainCount)
	case kindWindow:
		window()
	case kindWordWindow:
		q.dated = rng.IntN(len(ws.dated))
		q.words = []int32{ws.dated[q.dated]}
		window()
	case kindDeepPage:
		q.words = []int32{ws.common[rng.IntN(len(ws.common))]}
		q.offset = deepOffset
	}
	return q
}

// archiveQuery is the query as GET /api/v1/messages passes it to Archive.Search for an
// administrator: q, from, to, date_from, date_to, limit and offset.
func (q query) archiveQuery(g *generator) archive.Query {
	aq := archive.Query{Tenant: tenant, Limit: pageSize, Offset: q.offset}
	words := make([]string, len(q.words))
	for i, w := range q.words {
		words[i] = g.words[w]
	}
	aq.Text = strings.Join(words, " ")
	if q.from >= 0 {
		aq.From = g.addrs[q.from].addr
	}
	if q.toDomain >= 0 {
		aq.To = "@" + g.domains[q.toDomain]
	}
	if q.dayTo > 0 {
		aq.DateFrom, aq.DateTo = dayStart(q.dayFrom), dayStart(q.dayTo)
	}
	return aq
}

// searchtimeArg is q as bench/searchtime takes it: text (with from= and to=), offset,
// first day and days.
func (q query) searchtimeArg(g *generator) string {
	aq := q.archiveQuery(g)
	words := strings.Fields(aq.Text)
	if aq.From != "" {
		words = append(words, "from="+aq.From)
	}
	if aq.To != "" {
		words = append(words, "to="+aq.To)
	}
	arg := strings.Join(words, " ")
	if aq.Offset > 0 || q.dayTo > 0 {
		arg += "|" + strconv.Itoa(aq.Offset)
	}
	if q.dayTo > 0 {
		arg += "|" + aq.DateFrom.Format(time.DateOnly) + "|" + strconv.Itoa(q.dayTo-q.dayFrom)
	}
	return arg
}

// printQueries writes the queries of the search after step (from 1), perKind of each
// kind, one a line: the kind, a tab, the searchtime argument.
func printQueries(out io.Writer, g *generator, ws *wordSet, perKind, step int) {
	for _, q := range newQueries(ws, perKind, uint64(step)) {
		fmt.Fprintf(out, "%s\t%s\n", q.kind, q.searchtimeArg(g))
	}
}

// expected is the number of messages q matches, from the oracle.
func (q query) expected(ws *wordSet, c *counts) int {
	switch q.kind {
	case kindTwoWords:
		return int(c.pair[q.pair])
	case kindWordWindow:
		return sum(c.datedDay[q.dated], q.dayFrom, q.dayTo)
	case kindFrom:
		return int(c.from[q.from])
	case kindToDomain:
		return int(c.rcptDomain[q.toDomain])
	case kindWindow:
		return sum(c.day, q.dayFrom, q.dayTo)
	}
	return int(c.word[ws.slot[q.words[0]]]) // one word, no window
}

// matches says whether message m satisfies q.
func (q query) matches(g *generator, m *message) bool {
	for _, w := range q.words {
		if !m.hasWord(w) {
			return false
		}
	}
	if q.from >= 0 && m.sender != q.from {
		return false
	}
	if q.toDomain >= 0 && !hasDomain(g, m.rcpts(), q.toDomain) {
		return false
	}
	return q.dayTo == 0 || (m.day() >= q.dayFrom && m.day() < q.dayTo)
}

func hasDomain(g *generator, addrs []int, domain int) bool {
	for _, a := range addrs {
		if g.addrs[a].domain == domain {
			return true
		}
	}
	return false
}

// pageLen is how many messages a page of q holds when total messages match.
func (q query) pageLen(total int) int { return min(max(total-q.offset, 0), pageSize) }

// dayStart is the first instant of day d of the archive.
func dayStart(d int) time.Time { return archiveStart.AddDate(0, 0, d) }
