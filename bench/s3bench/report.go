package main

import (
	"fmt"
	"io"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

func printUploadHeader(out io.Writer) {
	fmt.Fprintf(out, "  %-10s %10s %10s %10s %12s %12s  %s\n", "s3_threads", "plain MB/s", "drain MB/s", "store MB/s",
		"drain/plain", "store/plain", "CPU plain / drain / store")
}

func printUpload(out io.Writer, r uploadResult, size int64) {
	mb := float64(size) / 1e6
	plain, drain, full := benchenv.Rate(mb, r.plain), benchenv.Rate(mb, r.drain), benchenv.Rate(mb, r.full)
	fmt.Fprintf(out, "  %-10d %10.1f %10.1f %10.1f %12s %12s  %s / %s / %s\n", r.threads, plain, drain, full,
		ratioMet(drain/plain), ratioMet(full/plain), r.plainCPU, r.drainCPU, r.fullCPU)
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
