// Command exportbench measures the eDiscovery export (issue 5, docs/performance.md
// "Export"): a production of many archived messages with natives, text, attachments and
// both load files, against a decrypt-only read of the same messages in the same run, with
// the peak memory of the export; then the ZIP download of that production against
// `zip -0 -r` of the same directory. It works on a fresh SQLite database and temporary
// directories that it creates and removes; bench/run.sh (make bench) calls it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

// config holds the command's flags.
type config struct {
	corpus     string
	messages   int
	workers    int
	readers    int
	batch      int
	rounds     int
	tmpDir     string
	zipCmd     string
	cpuProfile string
	memProfile string
	profile    string // which exports the profiles cover: both, natives or all
	keep       bool
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("exportbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.corpus, "corpus", benchenv.EnvOr("MAILLEDGER_CORPUS", filepath.Join("..", "shared", "corpus")), "the shared corpus, read in place")
	fs.IntVar(&c.messages, "messages", 10000, "distinct messages to archive and export (copies of the corpus files)")
	fs.IntVar(&c.workers, "workers", 4, "the export's workers field (EDISCOVERY_WORKERS is set to match)")
	fs.IntVar(&c.readers, "readers", 4, "goroutines of the decrypt-only read")
	fs.IntVar(&c.batch, "batch", 500, "messages per archive Commit while filling the archive")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds of each ZIP measurement (the median is reported)")
	fs.StringVar(&c.tmpDir, "tmpdir", os.TempDir(), "directory for the database, the store and the production")
	fs.StringVar(&c.zipCmd, "zip", "zip", "the zip command to compare the download with (skipped when not found)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the exports (only; see -profile) to this file")
	fs.StringVar(&c.memProfile, "memprofile", "", "write an allocation profile of the exports (see -profile) to this file, and one taken just before them to this file + \".base\" (go tool pprof -sample_index=alloc_space -diff_base FILE.base FILE)")
	fs.StringVar(&c.profile, "profile", "both", "which exports -cpuprofile and -memprofile cover: both, natives (the natives-only export) or all (the all-options export)")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (database, store, production) and print its path")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.profile != "both" && c.profile != "natives" && c.profile != "all" {
		return nil, errors.New("-profile must be both, natives or all")
	}
	if c.messages < 1 || c.workers < 1 || c.workers > 32 || c.readers < 1 || c.batch < 1 || c.rounds < 1 {
		return nil, errors.New("-messages, -readers, -batch and -rounds must be at least 1; -workers 1 to 32")
	}
	return c, nil
}

func main() { benchenv.Main("exportbench", parseFlags, run) }

// run prepares the archive, then measures the read, the export and the downloads.
func run(ctx context.Context, cfg *config, out io.Writer) error {
	started := time.Now()
	fmt.Fprintf(out, "exportbench %s\nmachine: %s\n\n", started.UTC().Format(time.RFC3339), benchenv.Machine())
	work, err := os.MkdirTemp(cfg.tmpDir, "exportbench-")
	if err != nil {
		return err
	}
	if cfg.keep {
		fmt.Fprintf(out, "work directory kept: %s\n", work)
	} else {
		defer os.RemoveAll(work)
	}
	env, err := newBenchEnv(ctx, cfg, work)
	if err != nil {
		return err
	}
	defer env.close(cfg.keep)
	if err := env.fill(ctx, cfg, out); err != nil {
		return err
	}
	res, err := measure(ctx, cfg, env, out)
	if err != nil {
		return err
	}
	report(out, cfg, env, res)
	fmt.Fprintf(out, "\ndone in %s, load average %s\n", time.Since(started).Round(time.Second), benchenv.LoadAverage())
	return nil
}

// measure runs the timed parts in order: decrypt-only and read-and-parse baselines, the
// export (with the CPU profile, when asked), then the ZIP rounds.
func measure(ctx context.Context, cfg *config, env *benchEnv, out io.Writer) (*results, error) {
	res := &results{}
	var err error
	decrypt := func() error { // three passes (first, before and after the export), the median reported
		d, err := readAll(ctx, cfg.readers, env.ids, env.decryptOne)
		if err != nil {
			return fmt.Errorf("decrypt-only read: %w", err)
		}
		res.decrypts = append(res.decrypts, d)
		return nil
	}
	if err := decrypt(); err != nil {
		return nil, err
	}
	if res.parse, err = readAll(ctx, cfg.readers, env.ids, env.documentOne); err != nil {
		return nil, fmt.Errorf("read and parse: %w", err)
	}
	if res.floor, res.hashed, res.nativesFloor, err = env.floorPass(ctx, cfg.readers, env.dir); err != nil {
		return nil, fmt.Errorf("floor pass: %w", err)
	}
	if err := decrypt(); err != nil {
		return nil, err
	}
	runtime.GC() // the floor's prepared documents are garbage before the export is measured
	fmt.Fprintf(out, "baselines done: decrypt %s, read+parse %s, floor %s, floor with hashes %s\n", res.decrypts[0].took.Round(time.Millisecond),
		res.parse.took.Round(time.Millisecond), res.floor.took.Round(time.Millisecond), res.hashed.took.Round(time.Millisecond))
	ex, err := env.startExports(ctx, cfg.workers)
	if err != nil {
		return nil, err
	}
	defer ex.stop()
	// One profile covers the exports -profile names: started before the first of them and
	// stopped after the last.
	covers := func(which string) bool { return cfg.profile == "both" || cfg.profile == which }
	var stopProfiles func() error
	startIf := func(which string) error {
		if stopProfiles == nil && covers(which) {
			var err error
			stopProfiles, err = startProfiles(cfg)
			return err
		}
		return nil
	}
	stopIf := func(which string) error {
		if stopProfiles != nil && covers(which) && (which == "all" || cfg.profile == "natives") {
			stop := stopProfiles
			stopProfiles = nil
			return stop()
		}
		return nil
	}
	err = startIf("natives")
	if err == nil {
		res.natives, err = env.runExport(ctx, ex, cfg.workers, true)
		err = errors.Join(err, stopIf("natives"))
	}
	if err == nil {
		fmt.Fprintf(out, "natives-only export done: %s, %s\n", res.natives.status, res.natives.took.Round(time.Millisecond))
		if err = startIf("all"); err == nil {
			res.export, err = env.runExport(ctx, ex, cfg.workers, false)
			err = errors.Join(err, stopIf("all"))
		}
	}
	if stopProfiles != nil { // an export failed while profiled
		_ = stopProfiles()
	}
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(out, "all-options export done: %s, %s\n", res.export.status, res.export.took.Round(time.Millisecond))
	if err := decrypt(); err != nil {
		return nil, err
	}
	res.decrypt = medianPass(res.decrypts)
	if res.zip, err = env.zipRounds(ctx, cfg, ex, res.export); err != nil {
		return nil, fmt.Errorf("zip: %w", err)
	}
	return res, nil
}

// startProfiles starts the CPU profile and takes the base of the allocation profile, as
// asked; the function returned writes them.
func startProfiles(cfg *config) (func() error, error) {
	if cfg.memProfile != "" {
		if err := writeHeapProfile(cfg.memProfile + ".base"); err != nil {
			return nil, err
		}
	}
	stopCPU, err := benchenv.StartCPUProfile(cfg.cpuProfile)
	if err != nil {
		return nil, err
	}
	return func() error {
		stopCPU()
		if cfg.memProfile == "" {
			return nil
		}
		return writeHeapProfile(cfg.memProfile)
	}, nil
}

// writeHeapProfile writes the heap profile (its alloc_space samples count every allocation
// since the start) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC() // the profile is as of the last GC
	return errors.Join(pprof.WriteHeapProfile(f), f.Close())
}

func rate(n float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return n / d.Seconds()
}
