package main

import (
	"fmt"
	"io"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

func printAssessHeader(out io.Writer, cfg *config) {
	fmt.Fprintf(out, "assessment of a request for %d addresses: %d metadata rows (%d naming the subject, 3 %% of those purged or erased already),\n",
		len(subjectAddresses), cfg.messages, cfg.subject)
	fmt.Fprintf(out, "  %d background addresses, %d legal holds; %d untimed then %d timed runs per case, the three taking turns\n",
		cfg.addresses, cfg.holds, cfg.warmup, cfg.runs)
	fmt.Fprintf(out, "  assessor = Archive.Assess (scope and holds in one statement: what the assessor runs); scope+holds = Archive.Scope then Archive.BlockingHolds;\n")
	fmt.Fprintf(out, "  bare = the three count queries of bench/erasurebench/bare.go; ratio = median over bare median; counts = sender/recipient/attachments/affected\n\n")
}

func printAssess(out io.Writer, r assessResult) error {
	fmt.Fprintf(out, "assessment, %s: %s; %s\n", r.dialect, r.version, r.durability)
	fmt.Fprintf(out, "  generated %d metadata and %d rcpt rows in %s (not part of the figures)\n", r.world.messages, r.rcptRows, r.load.Round(time.Millisecond))
	fmt.Fprintf(out, "  %-11s %-19s %-19s %-19s %-19s %-19s %6s %6s %-7s %-7s\n", "case", "counts s/r/a/n", "scope med/p95",
		"holds med/p95", "scope+holds med/p95", "bare med/p95", "ratio", "Assess", "<500ms", "<=2x")
	var wrong error
	for _, c := range r.cases {
		fmt.Fprintf(out, "  %-11s %-19s %-19s %-19s %-19s %-19s %6.2f %6.2f %-7s %-7s\n", c.name, counts(c.scope),
			medP95(c.scopeTimes), medP95(c.holdTimes), medP95(c.assessorTimes), medP95(c.bareTimes), c.ratio(c.assessorTimes),
			c.ratio(c.oneTimes), benchenv.Met(p95(c.oneTimes) < goalAssess), benchenv.Met(c.ratio(c.oneTimes) <= goalAssessRatio))
		fmt.Fprintf(out, "  %-11s %-19s %-19s %-19s %-19s   (goals judged on the assessor, Archive.Assess)\n", "", "", "", "Archive.Assess:", medP95(c.oneTimes))
		if err := c.correct(r.world); err != nil && wrong == nil {
			wrong = err
		}
	}
	if wrong != nil {
		fmt.Fprintf(out, "  WRONG: %v\n\n", wrong)
		return wrong
	}
	fmt.Fprintf(out, "  counts equal the generator's for the assessor, Archive.Assess and the bare queries; holds: none, then %s only\n\n", blockingHold.id)
	return nil
}

func counts(s archive.Scope) string {
	return fmt.Sprintf("%d/%d/%d/%d", s.AsSender, s.AsRecipient, s.Attachments, s.Affected)
}

func medP95(ds []time.Duration) string {
	return fmt.Sprintf("%s/%s", ms(median(ds)), ms(p95(ds)))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

func printExecuteHeader(out io.Writer, cfg *config) {
	fmt.Fprintf(out, "execution: Archive.Erase of the same %d addresses (Lock: eventstore.LockHead) over %d messages, %d of them the subject's,\n",
		len(subjectAddresses), cfg.execMessages, cfg.execSubject)
	fmt.Fprintf(out, "  every message in the full-text index, %d legal holds (none covering)\n\n", cfg.holds)
}

func printExecute(out io.Writer, r executeResult) error {
	fmt.Fprintf(out, "execution, %s: %s; %s\n", r.dialect, r.version, r.durability)
	fmt.Fprintf(out, "  generated %d messages with their index rows in %s (not part of the figure)\n", r.world.messages, r.load.Round(time.Millisecond))
	rate := float64(r.erased) / max(r.took.Seconds(), 1e-9)
	fmt.Fprintf(out, "  Erase: %d messages erased in %s (%.0f messages/s, batches of %d); index rows %d -> %d; goal < %s: %s\n",
		r.erased, r.took.Round(time.Millisecond), rate, r.batch, r.indexBefore, r.indexAfter, goalExecute, benchenv.Met(r.took < goalExecute))
	if err := r.correct(); err != nil {
		fmt.Fprintf(out, "  WRONG: %v\n\n", err)
		return err
	}
	fmt.Fprintln(out)
	return nil
}
