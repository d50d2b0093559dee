package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

// commitStats are the receiver's group commits, from its batch-size histogram.
type commitStats struct {
	commits  uint64
	messages float64
	buckets  string // "≤1: n, ≤2: n, …", commits per upper bound
}

func (c commitStats) mean() float64 {
	if c.commits == 0 {
		return 0
	}
	return c.messages / float64(c.commits)
}

// gatherCommits reads mailledger_smtp_commit_batch_messages from reg.
func gatherCommits(reg prometheus.Gatherer) (commitStats, error) {
	families, err := reg.Gather()
	if err != nil {
		return commitStats{}, err
	}
	for _, f := range families {
		if f.GetName() != "mailledger_smtp_commit_batch_messages" || len(f.GetMetric()) == 0 {
			continue
		}
		h := f.GetMetric()[0].GetHistogram()
		st := commitStats{commits: h.GetSampleCount(), messages: h.GetSampleSum()}
		var parts []string
		var below uint64
		for _, b := range h.GetBucket() {
			if n := b.GetCumulativeCount() - below; n > 0 {
				parts = append(parts, fmt.Sprintf("<=%g: %d", b.GetUpperBound(), n))
			}
			below = b.GetCumulativeCount()
		}
		if n := st.commits - below; n > 0 {
			parts = append(parts, fmt.Sprintf(">256: %d", n))
		}
		st.buckets = strings.Join(parts, ", ")
		return st, nil
	}
	return commitStats{}, fmt.Errorf("receiver metrics: no commit batch histogram")
}

func printResult(out io.Writer, r result) {
	fmt.Fprintf(out, "%s: %s; %s\n", r.dialect, r.version, r.durability)
	fmt.Fprintf(out, "  %-7s %6s %9s %8s %7s  %s\n", "", "msgs", "time", "msg/s", "MB/s", "CPU of this process (user+sys)")
	line := func(name string, d time.Duration, cpu benchenv.CPUTime) {
		fmt.Fprintf(out, "  %-7s %6d %9s %8.0f %7.1f  %s\n", name, r.messages, d.Round(time.Millisecond),
			benchenv.Rate(float64(r.messages), d), benchenv.Rate(float64(r.bytes)/1e6, d), cpu)
	}
	line("import", r.importTime, r.importCPU)
	line("smtp", r.smtpTime, r.smtpCPU)
	fmt.Fprintf(out, "  group commits: %d, %.1f messages each on average (%s)\n", r.commits.commits, r.commits.mean(), r.commits.buckets)
	ratio := r.smtpRate() / r.importRate()
	fmt.Fprintf(out, "  smtp / import = %.2f (goal >= %.1f: %s); smtp %.0f msg/s (goal >= %d: %s)\n",
		ratio, goalRatio, benchenv.Met(ratio >= goalRatio), r.smtpRate(), goalRate, benchenv.Met(r.smtpRate() >= goalRate))
	fmt.Fprintf(out, "  every message archived once on both: checked (rows = distinct digests = %d)\n\n", r.messages)
}
