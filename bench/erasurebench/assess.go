package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// Goals of issue 4 for the assessment.
const (
	goalAssess      = 500 * time.Millisecond
	goalAssessRatio = 2.0 // the assessor within 2× the bare queries
)

// assessResult is the assessment benchmark on one database.
type assessResult struct {
	dialect    database.Dialect
	version    string
	durability string
	world      *world
	rcptRows   int
	load       time.Duration
	cases      []assessCase
}

// assessCase is one measured request: timings of the assessor (Archive.Scope, then
// Archive.BlockingHolds), of Archive.Assess (both in one statement) and of the bare
// queries, in turns, after warm-up runs.
type assessCase struct {
	name                  string
	scope, oneScope, bare archive.Scope
	holds, oneHolds       []archive.Hold
	scopeTimes            []time.Duration
	holdTimes             []time.Duration
	assessorTimes         []time.Duration // scope + holds of the same run
	oneTimes              []time.Duration // Archive.Assess
	bareTimes             []time.Duration
}

// runAssess builds the world on a fresh database of dialect d and measures both cases:
// no active hold covers the subject's mail, then one does.
func runAssess(ctx context.Context, cfg *config, d database.Dialect) (assessResult, error) {
	res := assessResult{dialect: d}
	db, err := benchenv.OpenFresh(ctx, d, cfg.urls[d], cfg.tmpDir)
	if err != nil {
		return res, err
	}
	defer closeFresh(cfg, db)
	res.version, res.durability = db.Version, benchenv.Durability(ctx, db.DB)
	err = assessOn(ctx, cfg, db.DB, &res)
	return res, err
}

// assessOn fills db (fresh and migrated) with the assessment world and measures.
func assessOn(ctx context.Context, cfg *config, db *database.DB, res *assessResult) error {
	res.world = newWorld(cfg.assessShape())
	started := time.Now()
	if err := load(ctx, db, res.world, false); err != nil {
		return err
	}
	res.load = time.Since(started)
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM rcpt`).Scan(&res.rcptRows); err != nil {
		return err
	}
	arc, remove, err := openArchive(db, cfg.tmpDir)
	if err != nil {
		return err
	}
	defer remove()
	for _, name := range []string{"not blocked", "blocked"} {
		if name == "blocked" {
			if err := addHold(ctx, db, blockingHold); err != nil {
				return err
			}
		}
		c, err := measureAssess(ctx, cfg, db, arc, name)
		if err != nil {
			return err
		}
		res.cases = append(res.cases, c)
	}
	return nil
}

// closeFresh drops a fresh database, or keeps it and says where under -keep.
func closeFresh(cfg *config, db *benchenv.FreshDB) {
	if cfg.keep {
		db.Keep()
		fmt.Fprintf(os.Stderr, "erasurebench: kept %s\n", database.Redact(db.URL))
	}
	db.Close()
}

// openArchive opens the archive over db with a message store and keyring in a new
// directory under tmpDir (neither is read: assessment and erasure work on the database
// only), and returns a function that removes the directory.
func openArchive(db *database.DB, tmpDir string) (*archive.Archive, func(), error) {
	dir, err := os.MkdirTemp(tmpDir, "erasurebench-")
	if err != nil {
		return nil, nil, err
	}
	remove := func() { os.RemoveAll(dir) }
	arc, err := newArchive(db, dir)
	if err != nil {
		remove()
		return nil, nil, err
	}
	return arc, remove, nil
}

func newArchive(db *database.DB, dir string) (*archive.Archive, error) {
	blobs, err := archive.NewLocalStore(filepath.Join(dir, "messages"))
	if err != nil {
		return nil, err
	}
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	if err != nil {
		return nil, err
	}
	return archive.New(db, blobs, keys, archive.Options{})
}

// measureAssess runs the assessor, Archive.Assess and the bare queries cfg.warmup times
// untimed, then cfg.runs times each, in turns, each of them first in a third of the runs.
func measureAssess(ctx context.Context, cfg *config, db *database.DB, arc *archive.Archive, name string) (assessCase, error) {
	c := assessCase{name: name}
	for i := range cfg.warmup + cfg.runs {
		record := i >= cfg.warmup
		steps := []func() error{
			func() error { return c.timeAssessor(ctx, arc, record) },
			func() error { return c.timeAssess(ctx, arc, record) },
			func() error { return c.timeBare(ctx, db, record) },
		}
		for k := range steps {
			if err := steps[(i+k)%len(steps)](); err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

// timeAssessor runs what the assessor runs: Archive.Scope, then Archive.BlockingHolds.
func (c *assessCase) timeAssessor(ctx context.Context, arc *archive.Archive, record bool) error {
	t0 := time.Now()
	scope, err := arc.Scope(ctx, benchTenant, subjectAddresses)
	if err != nil {
		return err
	}
	t1 := time.Now()
	holds, _, err := arc.BlockingHolds(ctx, benchTenant, subjectAddresses)
	if err != nil {
		return err
	}
	t2 := time.Now()
	c.scope, c.holds = scope, holds
	if record {
		c.scopeTimes = append(c.scopeTimes, t1.Sub(t0))
		c.holdTimes = append(c.holdTimes, t2.Sub(t1))
		c.assessorTimes = append(c.assessorTimes, t2.Sub(t0))
	}
	return nil
}

func (c *assessCase) timeAssess(ctx context.Context, arc *archive.Archive, record bool) error {
	t0 := time.Now()
	scope, holds, _, err := arc.Assess(ctx, benchTenant, subjectAddresses)
	if err != nil {
		return err
	}
	c.oneScope, c.oneHolds = scope, holds
	if record {
		c.oneTimes = append(c.oneTimes, time.Since(t0))
	}
	return nil
}

func (c *assessCase) timeBare(ctx context.Context, db *database.DB, record bool) error {
	t0 := time.Now()
	scope, err := bareScope(ctx, db, benchTenant, subjectAddresses)
	if err != nil {
		return err
	}
	c.bare = scope
	if record {
		c.bareTimes = append(c.bareTimes, time.Since(t0))
	}
	return nil
}

// median and p95 (nearest rank) of a sample.
func median(ds []time.Duration) time.Duration { return percentile(ds, 50) }

func p95(ds []time.Duration) time.Duration { return percentile(ds, 95) }

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100
	return s[max(rank, 1)-1]
}

// ratio is the median of ds over the bare queries' median.
func (c assessCase) ratio(ds []time.Duration) float64 {
	b := median(c.bareTimes)
	if b <= 0 {
		return 0
	}
	return float64(median(ds)) / float64(b)
}

// correct says whether the assessor and the bare queries agree with the generator.
func (c assessCase) correct(w *world) error {
	want := w.expected()
	if c.scope != want || c.oneScope != want || c.bare != want {
		return fmt.Errorf("%s: Scope %+v, Assess %+v, bare queries %+v, generated %+v", c.name, c.scope, c.oneScope, c.bare, want)
	}
	var wantHolds []archive.Hold
	if c.name == "blocked" {
		wantHolds = []archive.Hold{{ID: blockingHold.id, Type: blockingHold.typ, Value: blockingHold.value}}
	}
	if !slices.Equal(c.holds, wantHolds) || !slices.Equal(c.oneHolds, wantHolds) {
		return fmt.Errorf("%s: BlockingHolds returned %v, Assess %v", c.name, c.holds, c.oneHolds)
	}
	return nil
}
