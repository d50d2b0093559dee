package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/bench/internal/benchcorpus"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// goalImportRate is issue 3's goal: messages per second on the 2-core machine.
const goalImportRate = 1000

// importTenant is the tenant the messages are imported into.
const importTenant = "default"

// replica is the set of message files an import run reads.
type replica struct {
	dir   string
	files []string
	bytes int64
}

// importResult is the import of the replica into a fresh archive on one database, and the
// plain copy of the same files made just before it.
type importResult struct {
	dialect    database.Dialect
	version    string
	durability string
	report     archive.ImportReport
	importTime time.Duration
	copyTime   time.Duration
	importCPU  cpuTime // this process's CPU time during the import (the servers' not included)
	copyCPU    cpuTime
	files      int
	bytes      int64
	docHits    uint64 // document texts answered from the parser's cache
	docReads   uint64 // documents read
}

func (r importResult) importRate() float64 { return rate(float64(r.report.Imported), r.importTime) }
func (r importResult) copyRate() float64   { return rate(float64(r.files), r.copyTime) }
func (r importResult) importMBs() float64  { return rate(float64(r.bytes)/1e6, r.importTime) }
func (r importResult) copyMBs() float64    { return rate(float64(r.bytes)/1e6, r.copyTime) }

// runImportAll replicates the corpus once and imports it on every requested database.
func runImportAll(ctx context.Context, cfg *config, out io.Writer) error {
	seeds, skipped, err := loadCorpus(cfg.corpus)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	work, err := os.MkdirTemp(cfg.tmpDir, "archivebench-")
	if err != nil {
		return err
	}
	defer benchenv.RemoveWork(work, cfg.keepFiles, out)
	rep := replica{dir: filepath.Join(work, "src")}
	if err := os.Mkdir(rep.dir, 0o700); err != nil {
		return err
	}
	start := time.Now()
	if rep.files, rep.bytes, err = replicate(seeds, cfg.messages, rep.dir); err != nil {
		return fmt.Errorf("replicate: %w", err)
	}
	printCorpus(out, cfg, seeds, skipped, rep, time.Since(start))
	var errs []error
	for _, d := range cfg.importDialects {
		res, err := runImport(ctx, cfg, d, rep, work)
		if err != nil && res.version == "" {
			errs = append(errs, skipOrFail(cfg, out, d, err))
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("import %s: %w", d, err))
			continue
		}
		printImport(out, cfg, res)
	}
	return errors.Join(errs...)
}

// runImport makes a fresh database of dialect d, copies the replica's files plainly, then
// imports them through archive.Importer (what `mailledger import DIR` does) and checks
// that every file was imported once.
func runImport(ctx context.Context, cfg *config, d database.Dialect, rep replica, work string) (importResult, error) {
	res := importResult{dialect: d, files: len(rep.files), bytes: rep.bytes}
	db, err := benchenv.OpenFresh(ctx, d, cfg.urls[d], work)
	if err != nil {
		return res, err
	}
	defer db.Close()
	res.version, res.durability = db.Version, benchenv.Durability(ctx, db.DB)
	copyDir := filepath.Join(work, "copy-"+string(d))
	cpu := processCPU()
	res.copyTime, err = plainCopy(rep.files, copyDir, copyWorkers(cfg))
	res.copyCPU = processCPU().sub(cpu)
	if err != nil {
		return res, fmt.Errorf("plain copy: %w", err)
	}
	dataDir := filepath.Join(work, "data-"+string(d))
	if !cfg.keepFiles {
		// Removed after the import, not before it: files deleted just before the import
		// would slow its creates (see -keep-files).
		defer os.RemoveAll(copyDir)
		defer os.RemoveAll(dataDir)
	}
	im, err := newImporter(cfg, db.DB, dataDir)
	if err != nil {
		return res, err
	}
	start, cpu := time.Now(), processCPU()
	res.report, err = im.Import(ctx, importTenant, []string{rep.dir})
	res.importTime, res.importCPU = time.Since(start), processCPU().sub(cpu)
	res.docHits, res.docReads = im.Archive.Parser().Documents.Stats()
	if err != nil {
		return res, err
	}
	return res, checkImported(res.report, len(rep.files))
}

// newImporter builds the archive as the service does (local store and key ring under
// dataDir) and an Importer with the configured workers and batch size.
func newImporter(cfg *config, db *database.DB, dataDir string) (*archive.Importer, error) {
	blobs, err := archive.NewLocalStore(filepath.Join(dataDir, "store"))
	if err != nil {
		return nil, err
	}
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dataDir, "keys"))
	if err != nil {
		return nil, err
	}
	arc, err := archive.New(db, blobs, keys, archive.Options{})
	if err != nil {
		return nil, err
	}
	if !cfg.documentCache {
		arc.Parser().Documents = nil
	}
	return &archive.Importer{Archive: arc, Workers: cfg.workers, BatchSize: cfg.batch}, nil
}

func checkImported(rep archive.ImportReport, want int) error {
	if rep.Failed > 0 {
		return fmt.Errorf("%s; first failure: %s", rep.Summary(), rep.Failures[0])
	}
	if rep.Imported != want || rep.Duplicates != 0 {
		return fmt.Errorf("%s; want imported %d, duplicates 0", rep.Summary(), want)
	}
	return nil
}

// copyWorkers is the plain copy's parallelism: -copy-workers, else the importer's.
func copyWorkers(cfg *config) int {
	switch {
	case cfg.copyWorkers > 0:
		return cfg.copyWorkers
	case cfg.workers > 0:
		return cfg.workers
	}
	return runtime.GOMAXPROCS(0)
}

// plainCopy copies files into a new directory dst on workers goroutines: read the file,
// write it under the same name, fsync it. It returns the time that took.
func plainCopy(files []string, dst string, workers int) (time.Duration, error) {
	if err := os.Mkdir(dst, 0o700); err != nil {
		return 0, err
	}
	next := make(chan string)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for src := range next {
				if errs[w] == nil {
					errs[w] = copyFile(src, filepath.Join(dst, filepath.Base(src)))
				}
			}
		}()
	}
	for _, f := range files {
		next <- f
	}
	close(next)
	wg.Wait()
	return time.Since(start), errors.Join(errs...)
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return benchcorpus.WriteSynced(dst, data)
}

func printCorpus(out io.Writer, cfg *config, seeds []benchcorpus.Seed, skipped []benchcorpus.Skipped, rep replica, took time.Duration) {
	fmt.Fprintf(out, "import: corpus %s, %d files, %d accepted by the parser\n", cfg.corpus, len(seeds)+len(skipped), len(seeds))
	for _, s := range skipped {
		fmt.Fprintf(out, "  skipped %s: %v\n", s.Name, s.Reason)
	}
	fmt.Fprintf(out, "  replicated to %d distinct files (header line X-Bench-Copy: N), %.1f MB, in %s (not timed)\n",
		len(rep.files), float64(rep.bytes)/1e6, took.Round(time.Millisecond))
	workers := cfg.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	fmt.Fprintf(out, "  import: archive.Importer{Workers: %d, BatchSize: %s} into tenant %q; plain copy: read + write + fsync per file, %d goroutines\n\n",
		workers, orDefault(cfg.batch), importTenant, copyWorkers(cfg))
}

func printImport(out io.Writer, cfg *config, r importResult) {
	fmt.Fprintf(out, "import, %s: %s; %s\n", r.dialect, r.version, r.durability)
	fmt.Fprintf(out, "  %-11s %6s %8s %9s %8s  %s\n", "", "files", "time", "msg/s", "MB/s", "CPU of this process (user+sys)")
	fmt.Fprintf(out, "  %-11s %6d %8s %9.0f %8.1f  %s\n", "plain copy", r.files, r.copyTime.Round(time.Millisecond), r.copyRate(), r.copyMBs(), r.copyCPU)
	fmt.Fprintf(out, "  %-11s %6d %8s %9.0f %8.1f  %s   (%s)\n", "import", r.report.Imported, r.importTime.Round(time.Millisecond),
		r.importRate(), r.importMBs(), r.importCPU, r.report.Summary())
	cache := "off"
	if cfg.documentCache {
		cache = "on"
	}
	fmt.Fprintf(out, "  documents (PDF, office): %d read, %d from the cache (%s)\n", r.docReads, r.docHits, cache)
	fmt.Fprintf(out, "  import / plain copy = %.2f; goal >= %d msg/s: %s\n\n", r.importRate()/r.copyRate(), goalImportRate,
		benchenv.Met(r.importRate() >= goalImportRate))
}

func orDefault(n int) string {
	if n <= 0 {
		return "default"
	}
	return fmt.Sprint(n)
}
