package main

import (
	"fmt"
	"io"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

func printUpload(out io.Writer, r uploadResult, size int64) {
	mb := float64(size) / 1e6
	plain := benchenv.Rate(mb, r.plain.took)
	fmt.Fprintf(out, "  s3_threads %d\n", r.threads)
	fmt.Fprintf(out, "    %-8s %9s %8s %16s  %s\n", "", "time", "MB/s", "/ plain", "CPU here (user+sys); S3 server")
	for _, row := range []struct {
		name string
		l    leg
	}{{"plain", r.plain}, {"sums", r.sums}, {"checked", r.checked}, {"drain", r.drain}, {"store", r.store}, {"batched", r.batched}} {
		rate := benchenv.Rate(mb, row.l.took)
		ratio := "(baseline)"
		if row.name != "plain" {
			ratio = ratioMet(rate / plain)
		}
		server := "n/a"
		if row.l.hasServer {
			server = row.l.srv.String()
		}
		fmt.Fprintf(out, "    %-8s %9s %8.1f %16s  %s; %s\n", row.name, row.l.took.Round(time.Millisecond), rate, ratio, row.l.cpu, server)
	}
}

func ratioMet(r float64) string {
	if r >= goalRatio {
		return fmt.Sprintf("%.2f met", r)
	}
	return fmt.Sprintf("%.2f NOT MET", r)
}

func printImports(out io.Writer, cfg *config, n int, local, remote importResult) {
	rate := func(d time.Duration) float64 { return benchenv.Rate(float64(n), d) }
	fmt.Fprintf(out, "  %-36s %9s %8s  %s\n", "", "time", "msg/s", "CPU of this process (user+sys)")
	fmt.Fprintf(out, "  %-36s %9s %8.0f  %s   (%s)\n", "local files", local.took.Round(time.Millisecond), rate(local.took), local.cpu, local.report.Summary())
	fmt.Fprintf(out, "  %-36s %9s %8.0f  %s   (%s)\n", fmt.Sprintf("S3 mode, s3_threads %d, staged", cfg.importThreads),
		remote.took.Round(time.Millisecond), rate(remote.took), remote.cpu, remote.report.Summary())
	fmt.Fprintf(out, "  %-36s %9s %8.0f\n", "S3 mode, until every file uploaded", remote.uploaded.Round(time.Millisecond), rate(remote.uploaded))
	fmt.Fprintf(out, "  S3 mode / local files = %.2f (import), %.2f (until uploaded)\n\n",
		rate(remote.took)/rate(local.took), rate(remote.uploaded)/rate(local.took))
}
