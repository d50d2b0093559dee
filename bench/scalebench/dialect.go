package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// dialectResult is the run on one database: a row per step, and every answer that
// disagreed with the oracle.
type dialectResult struct {
	dialect    database.Dialect
	version    string
	durability string
	steps      []stepResult
	wrong      []string
}

// stepResult is one step: its import, the state after it and, at the chosen steps, the
// searches and assessments.
type stepResult struct {
	step      int // from 1
	messages  int // in the archive after the step
	imported  int
	took      time.Duration
	cpu       time.Duration // this process's, user + system; the servers' not included
	dbBytes   int64         // after the step
	grew      int64         // during the step
	peakRSS   int64         // during the step (0: unknown)
	anonPeak  int64         // anonRSS, sampled every 100 ms
	heapPeak  int64         // Go heap objects, sampled every 100 ms
	heapLive  int64         // Go heap objects after the step and a GC
	upkeep    time.Duration // ANALYZE / VACUUM after the step, not timed
	search    *searchPoint  // nil when not measured after this step
	assess    []assessResult
	generated time.Duration // writing the step's mbox (first database only), not timed
}

func (s stepResult) rate() float64 { return rate(float64(s.imported), s.took) }

func rate(n float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return n / d.Seconds()
}

// runDialect imports the corpus step by step into a fresh database of dialect d and
// measures after each step.
func runDialect(ctx context.Context, cfg *config, c *corpus, d database.Dialect, work string) (dialectResult, error) {
	res := dialectResult{dialect: d}
	db, err := benchenv.OpenFresh(ctx, d, cfg.urls[d], work)
	if err != nil {
		return res, err
	}
	defer db.Close()
	if cfg.keep {
		db.Keep()
		fmt.Fprintf(cfg.log, "scalebench: %s kept at %s\n", d, db.URL)
	}
	res.version, res.durability = db.Version, benchenv.Durability(ctx, db.DB)
	dir, err := os.MkdirTemp(work, string(d)+"-")
	if err != nil {
		return res, err
	}
	if !cfg.keep {
		defer os.RemoveAll(dir)
	} else {
		fmt.Fprintf(cfg.log, "scalebench: %s message store kept at %s\n", d, dir)
	}
	arc, err := newArchive(db.DB, dir)
	if err != nil {
		return res, err
	}
	r := &stepRunner{cfg: cfg, corpus: c, db: db, arc: arc, res: &res}
	r.im = &archive.Importer{Archive: arc, Workers: cfg.workers, BatchSize: cfg.batch, Committers: cfg.committers}
	if r.size, err = dbSize(ctx, db.DB); err != nil {
		return res, err
	}
	for k := range c.stepCount() {
		if err := r.step(ctx, k); err != nil {
			return res, fmt.Errorf("step %d: %w", k+1, err)
		}
	}
	return res, nil
}

// newArchive builds the archive as the service does: a local message store and a key
// ring under dir.
func newArchive(db *database.DB, dir string) (*archive.Archive, error) {
	blobs, err := archive.NewLocalStore(filepath.Join(dir, "store"))
	if err != nil {
		return nil, err
	}
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	if err != nil {
		return nil, err
	}
	return archive.New(db, blobs, keys, archive.Options{})
}

// stepRunner runs the steps on one database.
type stepRunner struct {
	cfg    *config
	corpus *corpus
	db     *benchenv.FreshDB
	arc    *archive.Archive
	im     *archive.Importer
	res    *dialectResult
	size   int64 // of the database before the next step
}

// Upkeep after each step, untimed: VACUUM ANALYZE of the tables below on PostgreSQL
// (during the import its autovacuum's stand-in runs: autovacuum.go), ANALYZE TABLE on
// MySQL (InnoDB recalculates its statistics itself too). SQLite is left as the service
// leaves it.
const (
	statTables  = "metadata, rcpt, attachment, message_search, address_role"
	mysqlTables = "metadata, rcpt, attachment, search_term, address_role"
)

// step imports step k, then measures the database, the searches and the assessments.
func (r *stepRunner) step(ctx context.Context, k int) error {
	f, generated, err := r.corpus.file(k)
	if err != nil {
		return err
	}
	s := stepResult{step: k + 1, messages: f.to, generated: generated}
	if err := r.importStep(ctx, f, &s); err != nil {
		return err
	}
	start := time.Now()
	if err := upkeep(ctx, r.db.DB); err != nil {
		return err
	}
	s.upkeep = time.Since(start)
	size, err := dbSize(ctx, r.db.DB)
	if err != nil {
		return err
	}
	s.dbBytes, s.grew, r.size = size, size-r.size, size
	fmt.Fprintf(r.cfg.log, "scalebench: %s step %d/%d: %d messages in %s (%.0f msg/s), %d in the archive; mbox written in %s (not timed)\n",
		r.db.Dialect, s.step, r.corpus.stepCount(), s.imported, s.took.Round(time.Second), s.rate(), s.messages, s.generated.Round(time.Second))
	if r.cfg.searchAfter(k, r.corpus.stepCount()) {
		start := time.Now()
		if err := r.measure(ctx, f, &s); err != nil {
			return err
		}
		fmt.Fprintf(r.cfg.log, "scalebench: %s step %d/%d: searches and assessments in %s\n",
			r.db.Dialect, s.step, r.corpus.stepCount(), time.Since(start).Round(time.Second))
	}
	r.res.steps = append(r.res.steps, s)
	return nil
}

// importStep imports f's mbox through the Importer, timed, and checks that every message
// was imported once.
func (r *stepRunner) importStep(ctx context.Context, f stepFile, s *stepResult) error {
	av := startAutovacuum(ctx, r.db.DB)
	rssKnown := resetPeakRSS()
	heap := startHeapSampler(100 * time.Millisecond)
	stopProfile, err := r.startStepProfile(s.step)
	if err != nil {
		return err
	}
	cpu, start := processCPU(), time.Now()
	rep, err := r.im.Import(ctx, tenant, []string{f.path})
	s.took, s.cpu = time.Since(start), processCPU()-cpu
	stopProfile()
	avErr := av.Stop()
	if sum := av.summary(); sum != "" {
		fmt.Fprintf(r.cfg.log, "scalebench: %s step %d%s\n", r.db.Dialect, s.step, sum)
	}
	s.heapPeak, s.anonPeak = heap.Stop()
	if rssKnown {
		s.peakRSS = peakRSS()
	}
	runtime.GC()
	s.heapLive = heapObjects()
	s.imported = rep.Imported
	switch {
	case err != nil:
		return err
	case avErr != nil:
		return avErr
	case rep.Failed > 0:
		return fmt.Errorf("%s; first failure: %s", rep.Summary(), rep.Failures[0])
	case rep.Imported != f.to-f.from || rep.Duplicates != 0:
		return fmt.Errorf("%s; want imported %d, duplicates 0", rep.Summary(), f.to-f.from)
	}
	return nil
}

// startStepProfile starts the CPU profile of step's import when -cpuprofile-steps is
// set; the function it returns stops it and closes the file.
func (r *stepRunner) startStepProfile(step int) (stop func(), err error) {
	if r.cfg.stepProfiles == "" {
		return func() {}, nil
	}
	if err := os.MkdirAll(r.cfg.stepProfiles, 0o700); err != nil {
		return nil, err
	}
	return benchenv.StartCPUProfile(filepath.Join(r.cfg.stepProfiles, fmt.Sprintf("%s-step%d.pprof", r.db.Dialect, step)))
}

// upkeep gathers the planner statistics after a step (see statTables).
func upkeep(ctx context.Context, db *database.DB) error {
	switch db.Dialect {
	case database.Postgres:
		return exec(ctx, db, "VACUUM (ANALYZE) "+statTables)
	case database.MySQL:
		rows, err := db.QueryContext(ctx, "ANALYZE TABLE "+mysqlTables) // returns a result set
		if err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		return rows.Close()
	}
	return nil
}

func exec(ctx context.Context, db *database.DB, stmt string) error {
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return nil
}

// measure times the searches at every client count and the assessments, checking every
// answer against the oracle as of f.
func (r *stepRunner) measure(ctx context.Context, f stepFile, s *stepResult) error {
	s.search = newSearchPoint(r.corpus, f.oracle, r.cfg.queries, s.step)
	heap := startHeapSampler(100 * time.Millisecond)
	rssKnown := resetPeakRSS()
	defer func() {
		_, s.search.anonPeak = heap.Stop()
		if rssKnown {
			s.search.peakRSS = peakRSS()
		}
	}()
	for k, clients := range r.cfg.clients {
		lv, err := timeSearches(ctx, r.arc, r.corpus.g, s.search.queries, clients)
		if err != nil {
			return err
		}
		r.res.wrong = append(r.res.wrong, checkAnswers(r.corpus, f.oracle, s.search.queries, lv, k == 0)...)
		lv.dropPages() // checked: kept, they would grow the heap the next steps measure
		s.search.levels = append(s.search.levels, lv)
	}
	for _, who := range assessedAddresses {
		a, err := timeAssess(ctx, r.arc, r.corpus.g, who, r.cfg.assessRuns)
		if err != nil {
			return err
		}
		r.res.wrong = append(r.res.wrong, a.check(r.corpus.g, f.oracle)...)
		s.assess = append(s.assess, a)
	}
	return nil
}
