package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Goals of issue 2.
const (
	goalRatio      = 0.50   // the ledger keeps at least half the plain-insert rate
	goalVerifyRate = 100000 // events per second
)

// report prints the figures as plain text tables.
type report struct {
	started time.Time
	cfg     *config
}

func (r *report) header(out io.Writer) {
	fmt.Fprintf(out, "ledgerbench %s\n", r.started.UTC().Format(time.RFC3339))
	fmt.Fprintf(out, "machine: %s, %d cores (runtime.NumCPU), %s %s/%s, load average %s\n",
		cpuModel(), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, loadAverage())
	fmt.Fprintf(out, "ledger: eventstore.Append (projectors: none, or projections.All()); baseline: one INSERT statement per transaction into %s (PK + unique(stream_id, stream_version)%s)\n\n",
		plainTable, map[bool]string{true: " + events' two secondary indexes", false: ""}[r.cfg.plainIndexes])
}

func (r *report) appendResults(out io.Writer, info dbInfo, results []appendResult) {
	fmt.Fprintf(out, "append, %s: %s; %s\n", info.dialect, info.version, info.durability)
	fmt.Fprintf(out, "  %-9s %-10s %5s %6s %11s %11s %6s %-16s %s\n", "events/tx", "projectors", "txs", "events",
		"ledger ev/s", "plain ev/s", "ratio", "rounds lo/med/hi", "goal ratio >= 0.50")
	for _, res := range results {
		lo, mid, hi := res.roundRatios()
		fmt.Fprintf(out, "  %-9d %-10s %5d %6d %11.0f %11.0f %6.2f %-16s %s\n", res.perTx, projName(res.projections), res.txs,
			res.times.events, res.ledgerRate(), res.plainRate(), res.ratio(), fmt.Sprintf("%.2f/%.2f/%.2f", lo, mid, hi),
			met(res.ratio() >= goalRatio))
	}
	fmt.Fprintln(out)
}

func (r *report) verify(out io.Writer, res verifyResult) {
	fmt.Fprintf(out, "verify, %s: %s; %s\n", res.info.dialect, res.info.version, res.info.durability)
	fmt.Fprintf(out, "  populated %d events with %d checkpoints in %s (appends of %d events, not part of the figure)\n",
		res.events, res.checkpoints, res.populate.Round(time.Millisecond), r.cfg.verifyBatch)
	for i, d := range res.runs {
		fmt.Fprintf(out, "  run %d: %s, %.0f events/s\n", i+1, d.Round(time.Millisecond), rate(int(res.events), d))
	}
	fmt.Fprintf(out, "  median: %.0f events/s  goal >= %d events/s: %s\n\n", res.medianRate(), goalVerifyRate,
		met(res.medianRate() >= goalVerifyRate))
}

func (r *report) footer(out io.Writer) {
	fmt.Fprintf(out, "done in %s, load average %s\n", time.Since(r.started).Round(time.Second), loadAverage())
}

func projName(on bool) string {
	if on {
		return "all"
	}
	return "none"
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

// loadAverage is the 1, 5 and 15 minute load of /proc/loadavg, or "n/a".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "unknown cpu".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown cpu"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown cpu"
}
