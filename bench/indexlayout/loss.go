package main

import (
	"slices"

	"github.com/mailledger/mailledger/analyzer"
)

// kindUnindexed is the kind of the probe queries: a word FULLTEXT does not index.
const kindUnindexed = "unindexed word"

func queryOf(term string) analyzer.Query { return analyzer.Query{Terms: []string{term}} }

// lossReport is what InnoDB FULLTEXT loses of the terms under the server's rules.
type lossReport struct {
	rules         ftRules
	unindexed     int // distinct words of the corpus it does not index
	words         int // distinct words of the corpus
	wordsLost     int // (message, word) pairs it does not hold
	pairsLost     int // (message, pair) pairs it does not hold (too short or too long)
	postings      int // (message, term) pairs of the corpus
	queriesLost   map[string]int
	matchesLost   map[string]int
	matchesExact  map[string]int
	probes        []benchQuery
	probeMatches  []int // each probe's exact matches
	probeFulltext []int // what FULLTEXT should return, by its rules (always 0)
}

// fulltextAnswers computes in one pass the exact answers of the queries and probes (the
// B-tree's) and the answers FULLTEXT gives by its rules, and what the difference loses.
func fulltextAnswers(cfg *config, sh *shared, rules ftRules, probes []benchQuery) (want, probeWant [2][][]int64, loss *lossReport) {
	all := append(slices.Clone(sh.queries), probes...)
	ans := answers(sh.c, cfg.messages, all, nil, rules.indexed)
	q := len(sh.queries)
	want = [2][][]int64{ans[0][:q], ans[1][:q]}
	probeWant = [2][][]int64{ans[0][q:], ans[1][q:]}
	loss = &lossReport{rules: rules, words: len(sh.stats.df), postings: sh.stats.postings,
		queriesLost: map[string]int{}, matchesLost: map[string]int{}, matchesExact: map[string]int{}, probes: probes}
	for w, d := range sh.stats.df {
		if !rules.indexed(w) {
			loss.unindexed++
			loss.wordsLost += d
		}
	}
	for l, count := range sh.stats.pairLengths {
		if l < rules.minToken || l > rules.maxToken {
			loss.pairsLost += count
		}
	}
	for k, bq := range sh.queries {
		loss.matchesExact[bq.kind] += len(want[0][k])
		if !slices.Equal(want[0][k], want[1][k]) {
			loss.queriesLost[bq.kind]++
			loss.matchesLost[bq.kind] += len(want[0][k]) - len(intersect(want[0][k], want[1][k]))
		}
	}
	for k := range probes {
		loss.probeMatches = append(loss.probeMatches, len(probeWant[0][k]))
		loss.probeFulltext = append(loss.probeFulltext, len(probeWant[1][k]))
	}
	return want, probeWant, loss
}
