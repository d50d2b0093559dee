package main

import (
	"fmt"

	"github.com/mailledger/mailledger/database"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// printCorpus describes the generated term lists and the queries.
func printCorpus(out io.Writer, cfg *config, sh *shared) {
	st := sh.stats
	fmt.Fprintf(out, "corpus: %d generated messages, %.0f distinct terms each on average (words and adjacent pairs, analyzer.TermSet over a subject and a body), %d (message, term) pairs;\n",
		cfg.messages, float64(st.postings)/float64(cfg.messages), st.postings)
	fmt.Fprintf(out, "  %d made-up words (%d of them used) with Zipf(s=%.2f) frequencies, %d words a message on average, seed %d\n",
		cfg.vocabulary, len(st.df), cfg.zipfS, cfg.words, cfg.seed)
	fmt.Fprintf(out, "insert: batches of %d messages, one transaction each, the two layouts taking turns at going first\n", cfg.batch)
	fmt.Fprintf(out, "queries: %d of each kind in one random order, the same on every database and layout, after %d untimed; each reads the ids of all matching messages\n",
		cfg.queries, min(cfg.warmup, len(sh.queries)))
	fmt.Fprintf(out, "  %-16s %8s  %s\n", "kind", "terms", "matches p50 / min / max")
	for _, kind := range queryKinds {
		terms := map[string]bool{}
		var matches []float64
		for k, bq := range sh.queries {
			if bq.kind == kind {
				terms[bq.String()] = true
				matches = append(matches, float64(len(sh.exact[k])))
			}
		}
		slices.Sort(matches)
		fmt.Fprintf(out, "  %-16s %8d  %.0f / %.0f / %.0f\n", kind, len(terms), percentile(matches, 0.5), percentile(matches, 0), percentile(matches, 1))
	}
	fmt.Fprintf(out, "  (rare: 1 to %d messages; medium: 0.5 to 2 %%; common: 20 to 40 %%; pairs and 3-character prefixes drawn from random messages' text)\n\n", rareMax)
}

// printDialect prints one database's table: every figure of both layouts and the ratio
// of the alternative's to the chosen layout's (above 1: the chosen one is smaller or
// faster).
func printDialect(out io.Writer, cfg *config, sh *shared, res *dialectResult) {
	a, b := res.bench.results[0], res.bench.results[1]
	fmt.Fprintf(out, "== %s: %s; %s\n", res.dialect, res.version, res.settings)
	fmt.Fprintf(out, "  (a) chosen:      %s\n  (b) alternative: %s\n", a.name, b.name)
	row := func(figure string, x, y float64, format string) {
		fmt.Fprintf(out, "  %-46s %12s %12s %8s\n", figure, fmt.Sprintf(format, x), fmt.Sprintf(format, y), ratio(x, y))
	}
	fmt.Fprintf(out, "  %-46s %12s %12s %8s\n", "figure", "(a)", "(b)", "(b)/(a)")
	n := float64(cfg.messages)
	row("insert, ms per message", ms(a.insert)/n, ms(b.insert)/n, "%.3f")
	for k, s := range a.sizes {
		row("size, MiB, "+s.measure, mib(s.bytes), mib(b.sizes[k].bytes), "%.1f")
	}
	for _, kind := range queryKinds {
		la, lb := sortedMS(best(a, kind)), sortedMS(best(b, kind))
		row(kind+", p50 ms", percentile(la, 0.5), percentile(lb, 0.5), "%.2f")
		row(kind+", p99 ms", percentile(la, 0.99), percentile(lb, 0.99), "%.2f")
	}
	for _, note := range dialectNotes[res.dialect] {
		fmt.Fprintf(out, "  %s\n", note)
	}
	printNotes(out, res, sh)
	if res.loss != nil {
		printLoss(out, cfg, res.loss)
	}
	fmt.Fprintln(out)
}

// dialectNotes are what a reader of each table must know of how it was measured.
var dialectNotes = map[database.Dialect][]string{
	database.SQLite:   {"each layout in a database file of its own; nothing runs after the fill (the service runs neither ANALYZE nor FTS5's optimize)"},
	database.Postgres: {"VACUUM ANALYZE after the fill, as autovacuum would (this server runs without it): planner statistics, GIN's pending list merged, the B-tree's heap all-visible for index-only scans"},
	database.MySQL: {
		"(b) filters on tenant_id as (a) does, reading each matching row (InnoDB FULLTEXT gives its hidden FTS_DOC_ID, not id)",
		"data_length+index_length leaves out FULLTEXT's auxiliary tables, which hold the index; the .ibd files count them, but not what FULLTEXT's cache (up to innodb_ft_cache_size) holds unwritten",
	},
}

// printNotes says which intersection form each B-tree figure is, what ran after the fill,
// and whether every answer was right.
func printNotes(out io.Writer, res *dialectResult, sh *shared) {
	for j, r := range res.bench.results {
		forms := res.bench.layouts[j].forms()
		if len(forms) < 2 {
			continue
		}
		var parts []string
		for _, f := range forms {
			l := sortedMS(r.latency[latencyKey{kindAnd, f}])
			parts = append(parts, fmt.Sprintf("%s p50 %.2f ms, p99 %.2f ms", f, percentile(l, 0.5), percentile(l, 0.99)))
		}
		fmt.Fprintf(out, "  %s on (%c), both forms timed: %s; the table shows %s (the lower p50)\n", kindAnd, 'a'+j, strings.Join(parts, "; "), bestForm(r, kindAnd))
	}
	for j, l := range res.bench.layouts {
		if stmts := l.upkeep(); len(stmts) > 0 {
			fmt.Fprintf(out, "  after the fill, untimed in the insert figure: (%c) %s, %s\n", 'a'+j, strings.Join(stmts, "; "),
				res.bench.results[j].upkeep.Round(time.Millisecond))
		}
	}
	w := res.bench.wrong
	if w.n == 0 {
		fmt.Fprintf(out, "  answers: all %d queries returned the same ids on both layouts, and the ids the generator says\n", len(sh.queries))
		return
	}
	for _, s := range w.shown {
		fmt.Fprintf(out, "  WRONG: %s\n", s)
	}
	fmt.Fprintf(out, "  WRONG: %d wrong answers in all\n", w.n)
}

// printLoss says what InnoDB FULLTEXT does not index, and what that cost the queries.
func printLoss(out io.Writer, cfg *config, l *lossReport) {
	fmt.Fprintf(out, "  FULLTEXT loss under %s:\n", l.rules)
	fmt.Fprintf(out, "    %d of the corpus's %d distinct words are not indexed; they make %d of the %d (message, term) pairs (%.1f %%); pairs not indexed: %d\n",
		l.unindexed, l.words, l.wordsLost, l.postings, 100*float64(l.wordsLost)/float64(l.postings), l.pairsLost)
	var lost []string
	for _, kind := range queryKinds {
		if l.queriesLost[kind] > 0 {
			lost = append(lost, fmt.Sprintf("%s %d of %d (%d of %d matches)", kind, l.queriesLost[kind], cfg.queries, l.matchesLost[kind], l.matchesExact[kind]))
		}
	}
	if len(lost) == 0 {
		lost = []string{"none"}
	}
	fmt.Fprintf(out, "    timed queries FULLTEXT answers differently from the B-tree (as its rules predict): %s;\n", strings.Join(lost, ", "))
	fmt.Fprintln(out, "    their latencies are left out of both layouts' figures above")
	if len(l.probes) == 0 {
		return
	}
	var words []string
	found := 0
	for k, p := range l.probes {
		found += l.probeFulltext[k]
		if k < 12 {
			words = append(words, fmt.Sprintf("%q %.0f %%", p.q.Terms[0], 100*float64(l.probeMatches[k])/float64(cfg.messages)))
		}
	}
	fmt.Fprintf(out, "    the %d most frequent of those words, each searched on both layouts: FULLTEXT finds %d messages, the B-tree all that hold them (%s%s)\n",
		len(l.probes), found, strings.Join(words, ", "), map[bool]string{true: ", …", false: ""}[len(l.probes) > 12])
}

// best returns the latencies of kind on r in its fastest intersection form.
func best(r *layoutResult, kind string) []time.Duration {
	return r.latency[latencyKey{kind, bestForm(r, kind)}]
}

// bestForm is the form of kind with the lowest p50 latency on r ("" when it has one).
func bestForm(r *layoutResult, kind string) string {
	form, p50 := "", math.Inf(1)
	for key, l := range r.latency {
		if key.kind != kind {
			continue
		}
		if p := percentile(sortedMS(l), 0.5); p < p50 || (p == p50 && key.form < form) {
			form, p50 = key.form, p
		}
	}
	return form
}

func sortedMS(l []time.Duration) []float64 {
	out := make([]float64, len(l))
	for i, d := range l {
		out[i] = ms(d)
	}
	slices.Sort(out)
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func ratio(a, b float64) string {
	if a <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", b/a)
}

// percentile returns the q-quantile of sorted values (nearest rank).
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
