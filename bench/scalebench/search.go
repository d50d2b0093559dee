package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mailledger/mailledger/archive"
)

// searchPoint is the searches after one step: the queries, the number of messages each
// should match, and their answers at each client count.
type searchPoint struct {
	queries  []query
	expected []int
	levels   []levelResult
	peakRSS  int64 // during the searches and assessments (0: unknown)
	anonPeak int64 // anonRSS during them, sampled every 100 ms
}

// newSearchPoint draws the queries of step (the same on every database) and their
// expected totals.
func newSearchPoint(c *corpus, oracle *counts, perKind, step int) *searchPoint {
	p := &searchPoint{queries: newQueries(c.ws, perKind, uint64(step))}
	for _, q := range p.queries {
		p.expected = append(p.expected, q.expected(c.ws, oracle))
	}
	return p
}

// answer is what one timed search returned.
type answer struct {
	latency time.Duration
	total   int
	page    []archive.Message
}

// levelResult is every query of a search point run by clients concurrent clients.
type levelResult struct {
	clients int
	answers []answer // by query
}

// timeSearches runs one untimed query of each kind, then every query of qs on clients
// goroutines that take the next query as they finish one, timing each.
func timeSearches(ctx context.Context, arc *archive.Archive, g *generator, qs []query, clients int) (levelResult, error) {
	lv := levelResult{clients: clients, answers: make([]answer, len(qs))}
	for _, q := range qs[:min(len(queryKinds), len(qs))] {
		if _, _, err := arc.Search(ctx, q.archiveQuery(g)); err != nil {
			return lv, fmt.Errorf("%s query: %w", q.kind, err)
		}
	}
	next := make(chan int)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if errs[c] != nil {
					continue
				}
				start := time.Now()
				page, total, err := arc.Search(ctx, qs[i].archiveQuery(g))
				lv.answers[i] = answer{latency: time.Since(start), total: total, page: page}
				if err != nil {
					errs[c] = fmt.Errorf("%s query: %w", qs[i].kind, err)
				}
			}
		}()
	}
	for i := range qs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return lv, err
		}
	}
	return lv, nil
}

// dropPages lets the pages go once they are checked.
func (lv levelResult) dropPages() {
	for i := range lv.answers {
		lv.answers[i].page = nil
	}
}

// latencies returns the sorted latencies of the answers to queries of kind.
func (lv levelResult) latencies(qs []query, kind string) []time.Duration {
	var out []time.Duration
	for i, a := range lv.answers {
		if qs[i].kind == kind {
			out = append(out, a.latency)
		}
	}
	slices.Sort(out)
	return out
}

// percentile is the p-quantile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// checkAnswers compares every answer with the oracle: the total (as Search caps it) and
// the page's length; with pages set, also that each message on a page matches its query
// (regenerated from the index its Message-ID carries) and that the page is newest first.
func checkAnswers(c *corpus, oracle *counts, qs []query, lv levelResult, pages bool) []string {
	var wrong []string
	for i, a := range lv.answers {
		q := qs[i]
		want := q.expected(c.ws, oracle)
		desc := fmt.Sprintf("%d clients, %s %+v", lv.clients, q.kind, q.archiveQuery(c.g))
		if capped := min(want, archive.MaxTotal+1); a.total != capped {
			wrong = append(wrong, fmt.Sprintf("%s: total %d; want %d", desc, a.total, capped))
		}
		if len(a.page) != q.pageLen(want) {
			wrong = append(wrong, fmt.Sprintf("%s: page of %d; want %d", desc, len(a.page), q.pageLen(want)))
		}
		if pages {
			wrong = append(wrong, checkPage(c.g, oracle, q, a.page, desc)...)
		}
	}
	return wrong
}

func checkPage(g *generator, oracle *counts, q query, page []archive.Message, desc string) []string {
	var wrong []string
	for k, msg := range page {
		i, ok := messageIndex(msg.MessageID)
		switch {
		case !ok || i >= oracle.messages:
			wrong = append(wrong, fmt.Sprintf("%s: message %d has Message-ID %q, not one generated", desc, msg.ID, msg.MessageID))
		case !q.matches(g, g.message(i)):
			wrong = append(wrong, fmt.Sprintf("%s: found message #%d (id %d), which does not match", desc, i, msg.ID))
		case msg.Sent == nil || (k > 0 && page[k-1].Sent != nil && msg.Sent.After(*page[k-1].Sent)):
			wrong = append(wrong, fmt.Sprintf("%s: page not newest first at message %d", desc, msg.ID))
		}
	}
	return wrong
}

// messageIndex reads the generator's index from a Message-ID (see messageID).
func messageIndex(id string) (int, bool) {
	n, _, ok := strings.Cut(id, ".scalebench@")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(n)
	return i, err == nil && i >= 0
}
