package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
)

// goalExecute is issue 4's goal for executing a request that affects 100,000 emails.
const goalExecute = 30 * time.Second

// executeRequestID is the request the benchmark executes.
const executeRequestID = "GDPR-2026-00001"

// executeResult is the execution benchmark on one database.
type executeResult struct {
	dialect     database.Dialect
	version     string
	durability  string
	world       *world
	load        time.Duration
	indexBefore int
	indexAfter  int
	erased      int
	batch       int
	took        time.Duration
}

// runExecute builds the execution world (the full-text index filled) on a fresh database
// and times one Archive.Erase of the subject's addresses, with eventstore.LockHead as the
// lock of every batch, as the executor runs it.
func runExecute(ctx context.Context, cfg *config, d database.Dialect) (executeResult, error) {
	res := executeResult{dialect: d, batch: cfg.eraseBatch}
	if res.batch == 0 {
		res.batch = archive.DefaultEraseBatch
	}
	db, err := benchenv.OpenFresh(ctx, d, cfg.urls[d], cfg.tmpDir)
	if err != nil {
		return res, err
	}
	defer closeFresh(cfg, db)
	res.version, res.durability = db.Version, benchenv.Durability(ctx, db.DB)
	err = executeOn(ctx, cfg, db.DB, &res)
	return res, err
}

// executeOn fills db (fresh and migrated) with the execution world and times the erasure.
func executeOn(ctx context.Context, cfg *config, db *database.DB, res *executeResult) error {
	res.world = newWorld(cfg.executeShape())
	started := time.Now()
	if err := load(ctx, db, res.world, true); err != nil {
		return err
	}
	res.load = time.Since(started)
	var err error
	if res.indexBefore, err = indexRows(ctx, db); err != nil {
		return err
	}
	arc, remove, err := openArchive(db, cfg.tmpDir)
	if err != nil {
		return err
	}
	defer remove()
	started = time.Now()
	res.erased, err = arc.Erase(ctx, archive.EraseRequest{
		Tenant: benchTenant, RequestID: executeRequestID, Addresses: subjectAddresses,
		Today: time.Now(), Batch: cfg.eraseBatch, Lock: eventstore.LockHead,
	})
	res.took = time.Since(started)
	if err != nil {
		return fmt.Errorf("erase: %w", err)
	}
	res.indexAfter, err = indexRows(ctx, db)
	return err
}

// correct checks the erasure against the generator: every affected message erased, and
// exactly their index rows gone.
func (r executeResult) correct() error {
	want := r.world.expected().Affected
	if r.erased != want || r.indexBefore-r.indexAfter != want {
		return fmt.Errorf("erased %d messages (generated %d), index rows %d before and %d after", r.erased, want, r.indexBefore, r.indexAfter)
	}
	return nil
}
