package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

// Goals of the scale benchmark. Memory is "flat" when it stops growing with the archive:
// the last step is set against the middle one, not the first, which runs before any
// search has opened the connection pool and filled the caches (SQLite's page caches are
// in this process).
const (
	goalRateRatio   = 0.8  // last step's import rate against the first's, at least
	goalMemoryRatio = 1.25 // last step's peak anonymous RSS against the middle step's, at most ("flat")
	goalP99One      = 150 * time.Millisecond
	goalP99Eight    = 500 * time.Millisecond
)

// goalP99 is the p99 goal at a client count: none (0) but for 1 and 8 clients.
func goalP99(clients int) time.Duration {
	switch clients {
	case 1:
		return goalP99One
	case 8:
		return goalP99Eight
	}
	return 0
}

func printSetup(out io.Writer, cfg *config, c *corpus) {
	workers := cfg.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	fmt.Fprintf(out, "mail: %d generated messages in steps of %d; %d addresses over %d domains drawn with weight rank^-%.2f (the heaviest in about 20%% of the messages);\n",
		cfg.messages, cfg.step, addressCount, domainCount, addressSkew)
	order := "in no order"
	if cfg.inOrder {
		order = "in the order imported"
	}
	fmt.Fprintf(out, "  %d made-up words with Zipf(s=%.1f) frequencies, some accented words, 22%% multipart (HTML alternative, text attachment), sent over %d days %s\n",
		vocabulary, wordSkew, archiveDays, order)
	fmt.Fprintf(out, "import: archive.Importer{Workers: %d, BatchSize: %s, Committers: %s} of one mbox per step into tenant %q, sealed into a local store\n",
		workers, orDefault(cfg.batch), orDefault(cfg.committers), tenant)
	fmt.Fprintf(out, "search: Archive.Search as GET /api/v1/messages calls it, page of %d, %d queries of each kind at %v clients, after every %d step(s) and the last;\n",
		pageSize, cfg.queries, cfg.clients, cfg.searchEvery)
	fmt.Fprintf(out, "  every total and page length, and every message of the pages at %d client(s), checked against the generator\n", cfg.clients[0])
	fmt.Fprintf(out, "erasure: Archive.Assess of one address, %d timed runs after one untimed, checked against the generator\n\n", cfg.assessRuns)
}

func orDefault(n int) string {
	if n <= 0 {
		return "default"
	}
	return fmt.Sprint(n)
}

func printDialect(out io.Writer, cfg *config, r dialectResult) {
	fmt.Fprintf(out, "== %s: %s; %s\n", r.dialect, r.version, r.durability)
	printImport(out, r)
	printSearch(out, r)
	printAssess(out, r)
	if len(r.wrong) > 0 {
		fmt.Fprintf(out, "  WRONG: %d answers disagree with the generator; the first ones:\n", len(r.wrong))
		for _, w := range r.wrong[:min(len(r.wrong), 10)] {
			fmt.Fprintf(out, "    %s\n", w)
		}
	} else {
		fmt.Fprintln(out, "  every answer agreed with the generator")
	}
	fmt.Fprintf(out, "  command: %s\n\n", commandLine(cfg.args))
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func printImport(out io.Writer, r dialectResult) {
	fmt.Fprintf(out, "  import (CPU: this process, user+system; DB growth: %s; upkeep: untimed statistics after the step)\n", growthSource(r))
	fmt.Fprintf(out, "  %4s %9s %7s %6s %10s %9s %8s %11s %11s %12s %12s %7s\n", "step", "messages", "msg/s", "×first", "CPU ms/msg",
		"DB B/msg", "DB MB", "peak RSS MB", "anon RSS MB", "heap peak MB", "live heap MB", "upkeep")
	for _, s := range r.steps {
		fmt.Fprintf(out, "  %4d %9d %7.0f %6.2f %10.2f %9.0f %8.1f %11.1f %11.1f %12.1f %12.1f %7s\n", s.step, s.messages, s.rate(),
			s.rate()/r.steps[0].rate(), float64(s.cpu)/float64(time.Millisecond)/float64(s.imported), float64(s.grew)/float64(s.imported),
			mb(s.dbBytes), mb(s.peakRSS), mb(s.anonPeak), mb(s.heapPeak), mb(s.heapLive), s.upkeep.Round(100*time.Millisecond))
	}
	if len(r.steps) == 0 {
		return
	}
	first, last := r.steps[0], r.steps[len(r.steps)-1]
	ratio := last.rate() / first.rate()
	fmt.Fprintf(out, "  goal: last step's rate >= %.1f× the first's: %.2f× %s", goalRateRatio, ratio, benchenv.Met(ratio >= goalRateRatio))
	mid := r.steps[(len(r.steps)-1)/2]
	if mid.anonPeak > 0 {
		m := float64(last.anonPeak) / float64(mid.anonPeak)
		fmt.Fprintf(out, ";\n  memory flat (last step's peak anonymous RSS <= %.2f× that of step %d, the middle one): %.2f× %s", goalMemoryRatio, mid.step, m, benchenv.Met(m <= goalMemoryRatio))
	} else {
		fmt.Fprint(out, ";\n  memory flat: anonymous RSS unknown (no /proc/self/status)")
	}
	if mid.peakRSS > 0 {
		fmt.Fprintf(out, "; peak RSS with mapped files %.2f× step %d's", float64(last.peakRSS)/float64(mid.peakRSS), mid.step)
	}
	fmt.Fprintf(out, "; live heap %.2f× step %d's\n", float64(last.heapLive)/float64(max(mid.heapLive, 1)), mid.step)
}

func growthSource(r dialectResult) string {
	switch r.dialect {
	case "sqlite":
		return "page_count × page_size"
	case "postgres":
		return "pg_database_size"
	}
	return "information_schema data_length + index_length after ANALYZE TABLE"
}

// searched returns the steps after which the searches ran.
func searched(r dialectResult) []stepResult {
	var out []stepResult
	for _, s := range r.steps {
		if s.search != nil {
			out = append(out, s)
		}
	}
	return out
}

func printSearch(out io.Writer, r dialectResult) {
	steps := searched(r)
	for _, s := range steps {
		rss := ""
		if s.search.peakRSS > 0 {
			rss = fmt.Sprintf("; peak RSS during the searches and assessments %.1f MB (anon %.1f MB)", mb(s.search.peakRSS), mb(s.search.anonPeak))
		}
		fmt.Fprintf(out, "  search after step %d (%d messages%s), ms:\n  %-20s %14s", s.step, s.messages, rss, "kind", "matches p50/max")
		for _, lv := range s.search.levels {
			fmt.Fprintf(out, " %18s", fmt.Sprintf("%d client(s) p50 p99", lv.clients))
			fmt.Fprintf(out, " %-7s", goalText(lv.clients))
		}
		fmt.Fprintln(out)
		for _, kind := range queryKinds {
			fmt.Fprintf(out, "  %-20s %14s", kind, matchesText(s.search, kind))
			for _, lv := range s.search.levels {
				lat := lv.latencies(s.search.queries, kind)
				p99 := percentile(lat, 0.99)
				fmt.Fprintf(out, " %9.1f %8.1f %-7s", ms(percentile(lat, 0.5)), ms(p99), metText(p99, goalP99(lv.clients)))
			}
			fmt.Fprintln(out)
		}
	}
	if len(steps) > 1 {
		printCurve(out, steps)
	}
}

// printCurve prints the p99 of each kind after each searched step, at every client count.
func printCurve(out io.Writer, steps []stepResult) {
	var counts []string
	for _, lv := range steps[0].search.levels {
		counts = append(counts, fmt.Sprint(lv.clients))
	}
	fmt.Fprintf(out, "  search p99 curve, ms at %s client(s):\n  %-20s", strings.Join(counts, " / "), "kind \\ step")
	for _, s := range steps {
		fmt.Fprintf(out, " %13d", s.step)
	}
	fmt.Fprintln(out)
	for _, kind := range queryKinds {
		fmt.Fprintf(out, "  %-20s", kind)
		for _, s := range steps {
			var cells []string
			for _, lv := range s.search.levels {
				p99 := percentile(lv.latencies(s.search.queries, kind), 0.99)
				cells = append(cells, fmt.Sprintf("%.0f", ms(p99))+overMark(p99, goalP99(lv.clients)))
			}
			fmt.Fprintf(out, " %13s", strings.Join(cells, "/"))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out, "  (! marks a p99 over its goal)")
}

func matchesText(p *searchPoint, kind string) string {
	var n []int
	for i, q := range p.queries {
		if q.kind == kind {
			n = append(n, p.expected[i])
		}
	}
	slices.Sort(n)
	return fmt.Sprintf("%d/%d", n[(len(n)-1)/2], n[len(n)-1])
}

func goalText(clients int) string {
	if g := goalP99(clients); g > 0 {
		return fmt.Sprintf("<%dms", g.Milliseconds())
	}
	return ""
}

func metText(d, goal time.Duration) string {
	if goal <= 0 {
		return ""
	}
	return benchenv.Met(d < goal)
}

func overMark(d, goal time.Duration) string {
	if goal > 0 && d >= goal {
		return "!"
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func printAssess(out io.Writer, r dialectResult) {
	steps := searched(r)
	if len(steps) == 0 {
		return
	}
	fmt.Fprintln(out, "  erasure assessment (Archive.Assess of one address), ms, median (max) of the timed runs:")
	fmt.Fprintf(out, "  %4s %9s", "step", "messages")
	for _, a := range steps[0].assess {
		fmt.Fprintf(out, "  %-38s", fmt.Sprintf("%s: affected, time, goal < %s", a.who.name, a.who.goal))
	}
	fmt.Fprintln(out)
	for _, s := range steps {
		fmt.Fprintf(out, "  %4d %9d", s.step, s.messages)
		for _, a := range s.assess {
			fmt.Fprintf(out, "  %-38s", fmt.Sprintf("%8d %8.1f (%.1f) %s", a.scope.Affected, ms(a.median()), ms(a.max()), benchenv.Met(a.median() < a.who.goal)))
		}
		fmt.Fprintln(out)
	}
}

// printGenerated states the size of the mail written (once, for every database).
func printGenerated(out io.Writer, c *corpus) {
	var n, bytes int64
	for _, f := range c.steps {
		n += int64(f.to - f.from)
		bytes += f.bytes
	}
	if n > 0 {
		fmt.Fprintf(out, "generated mail: %d messages, %.1f MB, %d bytes a message on average\n", n, mb(bytes), bytes/n)
	}
}
