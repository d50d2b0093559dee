package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// tenant is the tenant the messages are archived in and exported from.
const tenant = "default"

// benchEnv is a fresh archive on a fresh SQLite database, and what the run filled it with.
type benchEnv struct {
	db        *benchenv.FreshDB
	arc       *archive.Archive
	dir       string // the work directory
	exportDir string // DIR_EXPORT
	ids       []int64
	bytes     int64 // of the archived originals
	seeds     int
	fillTime  time.Duration
}

func newBenchEnv(ctx context.Context, cfg *config, work string) (*benchEnv, error) {
	db, err := benchenv.OpenFresh(ctx, database.SQLite, "", work)
	if err != nil {
		return nil, err
	}
	env := &benchEnv{db: db, dir: work, exportDir: filepath.Join(work, "export")}
	blobs, err := archive.NewLocalStore(filepath.Join(work, "store"))
	if err != nil {
		db.Close()
		return nil, err
	}
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(work, "keys"))
	if err != nil {
		db.Close()
		return nil, err
	}
	if env.arc, err = archive.New(db.DB, blobs, keys, archive.Options{}); err != nil {
		db.Close()
		return nil, err
	}
	return env, nil
}

func (e *benchEnv) close(keep bool) {
	if keep {
		e.db.Keep()
	}
	e.db.Close()
}

// fill archives cfg.messages distinct copies of the corpus files: each copy carries one
// header line of its own, so that none is a duplicate.
func (e *benchEnv) fill(ctx context.Context, cfg *config, out io.Writer) error {
	seeds, err := loadSeeds(cfg.corpus, e.arc.Parser())
	if err != nil {
		return err
	}
	e.seeds = len(seeds)
	start := time.Now()
	for first := 0; first < cfg.messages; first += cfg.batch {
		n := min(cfg.batch, cfg.messages-first)
		if err := e.commitBatch(ctx, seeds, first, n); err != nil {
			return err
		}
	}
	e.fillTime = time.Since(start)
	fmt.Fprintf(out, "archived %d messages (%d corpus files, %.1f MB) in %s\n", len(e.ids), e.seeds,
		float64(e.bytes)/1e6, e.fillTime.Round(time.Millisecond))
	return nil
}

// commitBatch prepares copies first..first+n-1 on every core and commits them at once.
func (e *benchEnv) commitBatch(ctx context.Context, seeds [][]byte, first, n int) error {
	batch := make([]*archive.Prepared, n)
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		g.Go(func() error {
			raw := benchenv.DistinctCopy(seeds[(first+i)%len(seeds)], first+i)
			p, err := e.arc.Prepare(archive.Incoming{Tenant: tenant, Raw: raw, Source: "copy-" + strconv.Itoa(first+i)})
			batch[i] = p
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	res, err := e.arc.Commit(ctx, batch)
	if err != nil {
		return err
	}
	for i, r := range res {
		if r.Duplicate {
			return fmt.Errorf("copy %d is a duplicate", first+i)
		}
		e.ids = append(e.ids, r.ID)
		e.bytes += int64(len(batch[i].In.Raw))
	}
	return nil
}

// loadSeeds reads the corpus files (README.md and hidden entries left out) whose distinct
// copies the parser accepts, in name order.
func loadSeeds(dir string, parser *archive.Parser) ([][]byte, error) {
	paths, err := archive.SourceFiles([]string{dir})
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	var seeds [][]byte
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if _, err := parser.Parse(benchenv.DistinctCopy(raw, 0)); err == nil {
			seeds = append(seeds, raw)
		}
	}
	if len(seeds) == 0 {
		return nil, fmt.Errorf("no message the parser accepts under %s", dir)
	}
	return seeds, nil
}
