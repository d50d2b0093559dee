package main

import (
	"fmt"
	"io"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
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
	fmt.Fprintf(out, "machine: %s\n", benchenv.Machine())
	idx := map[bool]string{true: " + the events table's secondary index", false: ""}[r.cfg.plainIndexes]
	fmt.Fprintf(out, "ledger: eventstore.Append (projectors: none, or projections.All())\n")
	fmt.Fprintf(out, "baselines (the same rows, tables with PK + unique(stream_id, stream_version)%s):\n", idx)
	fmt.Fprintf(out, "  plain-1stmt: one INSERT statement per transaction into %s (a multi-row VALUES list when a transaction has several rows)\n", plainTable)
	fmt.Fprintf(out, "  plain-rows:  one single-row INSERT statement per row, all rows of a transaction in one transaction, into %s\n", plainRowsTable)
	fmt.Fprintf(out, "               (measured only when a transaction has more than one row; with 1 row it is plain-1stmt)\n\n")
}

func (r *report) appendResults(out io.Writer, info dbInfo, results []appendResult) {
	fmt.Fprintf(out, "append, %s: %s; %s\n", info.dialect, info.version, info.durability)
	fmt.Fprintf(out, "  %-9s %-10s %5s %6s %11s | %11s %6s %-16s %-7s | %11s %6s %-7s\n", "events/tx", "projectors", "txs", "events",
		"ledger ev/s", "1stmt ev/s", "ratio", "rounds lo/med/hi", ">=0.50?", "rows ev/s", "ratio", ">=0.50?")
	for _, res := range results {
		lo, mid, hi := res.roundRatios()
		rows, rowsRatio, rowsMet := "=1stmt", "", ""
		if res.times.rows > 0 {
			rows = fmt.Sprintf("%.0f", res.rowsRate())
			rowsRatio = fmt.Sprintf("%.2f", res.rowsRatio())
			rowsMet = benchenv.Met(res.rowsRatio() >= goalRatio)
		}
		fmt.Fprintf(out, "  %-9d %-10s %5d %6d %11.0f | %11.0f %6.2f %-16s %-7s | %11s %6s %-7s\n", res.perTx, projName(res.projections), res.txs,
			res.times.events, res.ledgerRate(), res.plainRate(), res.ratio(), fmt.Sprintf("%.2f/%.2f/%.2f", lo, mid, hi),
			benchenv.Met(res.ratio() >= goalRatio), rows, rowsRatio, rowsMet)
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
		benchenv.Met(res.medianRate() >= goalVerifyRate))
}

func (r *report) footer(out io.Writer) {
	fmt.Fprintf(out, "done in %s, load average %s\n", time.Since(r.started).Round(time.Second), benchenv.LoadAverage())
}

func projName(on bool) string {
	if on {
		return "all"
	}
	return "none"
}
