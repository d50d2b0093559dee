package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

// Goals of issues 5 and 10.
const (
	goalExportRate  = 1000      // emails/s
	goalFloorRatio  = 0.8       // of the floor measured in the same run
	goalPeakMemory  = 512 << 20 // bytes
	mebibyte        = 1 << 20
	megabytePerByte = 1e-6
)

// results are the measurements of one run.
type results struct {
	decrypt  readResult   // the median of decrypts
	decrypts []readResult // the decrypt-only passes: first, just before and just after the export
	parse    readResult
	floor    readResult // decrypt + the same file creations, nothing parsed (floorOne)
	hashed   readResult // the floor plus the load files' MD5s and the attachments' SHA-256s
	// nativesFloor is decrypt + MD5 + create the native's file: a natives-only floor.
	nativesFloor readResult
	natives      exportResult // the natives-only export
	export       exportResult // the all-options export
	zip          zipResult
}

// report prints the figures and whether each goal is met.
func report(out io.Writer, cfg *config, env *benchEnv, r *results) {
	n := float64(len(env.ids))
	exportRate := rate(n, r.export.took)
	decryptRate := rate(n, r.decrypt.took)
	ratio := 0.0
	if decryptRate > 0 {
		ratio = exportRate / decryptRate
	}
	fmt.Fprintf(out, "\n== export of %d messages (%.1f MB of originals), workers %d, natives+text+attachments, csv+dat, sqlite\n",
		len(env.ids), float64(env.bytes)*megabytePerByte, cfg.workers)
	passes := make([]string, len(r.decrypts))
	for i, d := range r.decrypts {
		passes[i] = d.took.Round(1e6).String()
	}
	fmt.Fprintf(out, "decrypt-only read (Archive.Raw, %d goroutines): %8.0f emails/s  (%s, the median of %s; CPU %.2f ms/email)\n",
		cfg.readers, decryptRate, r.decrypt.took.Round(1e6), strings.Join(passes, ", "), perEmail(r.decrypt.cpu, r.decrypt.n))
	fmt.Fprintf(out, "read+parse (ReadDocument, %d goroutines):       %8.0f emails/s  (%s; CPU %.2f ms/email)\n",
		cfg.readers, rate(n, r.parse.took), r.parse.took.Round(1e6), perEmail(r.parse.cpu, r.parse.n))
	fmt.Fprintf(out, "floor: decrypt + create the same files (%d g.): %8.0f emails/s  (%s; CPU %.2f ms/email; parse done beforehand, untimed)\n",
		cfg.readers, rate(n, r.floor.took), r.floor.took.Round(1e6), perEmail(r.floor.cpu, r.floor.n))
	fmt.Fprintf(out, "floor + the load files' hashes (%d g.):     %8.0f emails/s  (%s; CPU %.2f ms/email; MD5 of native and attachments, SHA-256 of attachments)\n",
		cfg.readers, rate(n, r.hashed.took), r.hashed.took.Round(1e6), perEmail(r.hashed.cpu, r.hashed.n))
	fmt.Fprintf(out, "export, create to completed:                    %8.0f emails/s  (%s; CPU %.2f ms/email), %d processed, %d failed, %d files, %.1f MB written\n",
		exportRate, r.export.took.Round(1e6), perEmail(r.export.cpu, len(env.ids)), r.export.processed, r.export.failed,
		r.export.files, float64(r.export.outputSize)*megabytePerByte)
	fmt.Fprintf(out, "CPU-bound ceilings on %d idle cores: decrypt-only %.0f, read+parse %.0f, export %.0f emails/s\n", runtime.NumCPU(),
		ceiling(r.decrypt.cpu, r.decrypt.n), ceiling(r.parse.cpu, r.parse.n), ceiling(r.export.cpu, len(env.ids)))
	fmt.Fprintf(out, "CPU used by this process during the export: %.2f of %d cores\n", r.export.cpu.Seconds()/r.export.took.Seconds(), runtime.NumCPU())
	fmt.Fprintf(out, "(old measure) all-options export / decrypt-only: %.2f (the floor: %.2f; with the required hashes: %.2f)\n", ratio,
		rate(n, r.floor.took)/max(decryptRate, 1e-9), rate(n, r.hashed.took)/max(decryptRate, 1e-9))
	reportAgainstFloors(out, cfg, n, r)
	rss := "n/a"
	if r.export.rssPeak > 0 {
		rss = fmt.Sprintf("%.0f MiB", float64(r.export.rssPeak)/mebibyte)
		if !r.export.rssReset {
			rss += " (whole process: the peak could not be reset)"
		}
	}
	fmt.Fprintf(out, "peak memory during the export: HeapInuse %.0f MiB, VmHWM %s\n", float64(r.export.heapPeak)/mebibyte, rss)
	fmt.Fprintf(out, "goal >= %d emails/s: %s; goal peak < 512 MiB: %s\n",
		goalExportRate, benchenv.Met(exportRate >= goalExportRate),
		benchenv.Met(max(r.export.heapPeak, r.export.rssPeak) < goalPeakMemory))
	reportZip(out, cfg, r)
}

// reportAgainstFloors prints each export against its floor from the same run: the
// natives-only export against decrypt + MD5 + create the native, the all-options export
// against decrypt + the required hashes + create the same files.
func reportAgainstFloors(out io.Writer, cfg *config, n float64, r *results) {
	nativesRate, nativesFloor := rate(n, r.natives.took), rate(n, r.nativesFloor.took)
	allRate, allFloor := rate(n, r.export.took), rate(n, r.hashed.took)
	fmt.Fprintf(out, "\n== against the floor of the same run (%d workers, floors on %d goroutines)\n", cfg.workers, cfg.readers)
	fmt.Fprintf(out, "natives-only floor (decrypt + MD5 + create the native): %8.0f emails/s  (%s; CPU %.2f ms/email)\n",
		nativesFloor, r.nativesFloor.took.Round(1e6), perEmail(r.nativesFloor.cpu, r.nativesFloor.n))
	fmt.Fprintf(out, "natives-only export (natives + CSV), create to completed: %8.0f emails/s  (%s; CPU %.2f ms/email), %d processed, %d failed\n",
		nativesRate, r.natives.took.Round(1e6), perEmail(r.natives.cpu, int(n)), r.natives.processed, r.natives.failed)
	fmt.Fprintf(out, "all-options floor (decrypt + hashes + create the same files): %8.0f emails/s  (%s; CPU %.2f ms/email)\n",
		allFloor, r.hashed.took.Round(1e6), perEmail(r.hashed.cpu, r.hashed.n))
	fmt.Fprintf(out, "all-options export: %8.0f emails/s  (%s; CPU %.2f ms/email)\n", allRate, r.export.took.Round(1e6), perEmail(r.export.cpu, int(n)))
	nr, ar := nativesRate/max(nativesFloor, 1e-9), allRate/max(allFloor, 1e-9)
	fmt.Fprintf(out, "natives-only export / its floor: %.2f; all-options export / its floor: %.2f\n", nr, ar)
	// The same ratios by CPU time per email (the floor's over the export's), which depend
	// less on what else runs on the machine, and the cores each pass got.
	fmt.Fprintf(out, "by CPU per email: natives-only %.2f, all-options %.2f; cores used: natives floor %.2f, natives export %.2f, all-options floor %.2f, all-options export %.2f\n",
		cpuRatio(r.nativesFloor.cpu, r.natives.cpu), cpuRatio(r.hashed.cpu, r.export.cpu),
		cores(r.nativesFloor.cpu, r.nativesFloor.took), cores(r.natives.cpu, r.natives.took), cores(r.hashed.cpu, r.hashed.took), cores(r.export.cpu, r.export.took))
	// What of an export's time is not its run: the admission after the create call, and the
	// completion seen by the polling (every 50 ms).
	for _, e := range []struct {
		name string
		res  exportResult
	}{{"natives-only", r.natives}, {"all-options", r.export}} {
		fmt.Fprintf(out, "%s export: admitted after %s, ran %s (started_at to completed_at), seen completed %s later\n", e.name,
			e.res.queued.Round(1e6), e.res.ran.Round(1e6), (e.res.took - e.res.queued - e.res.ran).Round(1e6))
	}
	fmt.Fprintf(out, "goal natives-only >= %.1f of its floor: %s; all-options against its floor: %.2f (reported)\n",
		goalFloorRatio, benchenv.Met(nr >= goalFloorRatio), ar)
}

// cpuRatio is floor / export of two CPU times over the same emails.
func cpuRatio(floor, export time.Duration) float64 {
	if export <= 0 {
		return 0
	}
	return floor.Seconds() / export.Seconds()
}

// cores is the CPU time of a pass over its wall-clock time.
func cores(cpu, took time.Duration) float64 {
	if took <= 0 {
		return 0
	}
	return cpu.Seconds() / took.Seconds()
}

// ceiling is the rate at which every core would do nothing but this work.
func ceiling(cpu time.Duration, n int) float64 {
	if cpu <= 0 {
		return 0
	}
	return float64(runtime.NumCPU()) * float64(n) / cpu.Seconds()
}

func reportZip(out io.Writer, cfg *config, r *results) {
	payload := float64(r.export.outputSize) * megabytePerByte
	fmt.Fprintf(out, "\n== ZIP of that production (%.1f MB in files, ZIP %.1f MB), median of %d rounds, MB/s of file bytes\n",
		payload, float64(r.zip.zipBytes)*megabytePerByte, cfg.rounds)
	fmt.Fprintf(out, "ExportDownload.Stream to io.Discard:       %7.1f MB/s (%s)\n", rate(payload, r.zip.stream), r.zip.stream.Round(1e6))
	fmt.Fprintf(out, "GET …/download over loopback HTTP:         %7.1f MB/s (%s)\n", rate(payload, r.zip.http), r.zip.http.Round(1e6))
	if r.zip.zip == 0 {
		fmt.Fprintf(out, "zip -0 -r: skipped (%s)\n", r.zip.zipSkip)
		return
	}
	fmt.Fprintf(out, "zip -0 -r -q - . > /dev/null:              %7.1f MB/s (%s)\n", rate(payload, r.zip.zip), r.zip.zip.Round(1e6))
	fmt.Fprintf(out, "HTTP download / zip -0: %.2f\n", r.zip.zip.Seconds()/r.zip.http.Seconds())
}

// medianPass returns the pass of median duration.
func medianPass(passes []readResult) readResult {
	sorted := slices.Clone(passes)
	slices.SortFunc(sorted, func(a, b readResult) int { return cmp.Compare(a.took, b.took) })
	return sorted[len(sorted)/2]
}
