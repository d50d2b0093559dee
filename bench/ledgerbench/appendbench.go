package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

// appendCase is one transaction shape, txs transactions of perTx events each, through a
// store with or without the service's inline projectors.
type appendCase struct {
	perTx       int
	txs         int
	projections bool
}

// appendResult is the measurement of one case on one database.
type appendResult struct {
	appendCase
	dialect database.Dialect
	times   phaseTimes   // summed over the rounds
	rounds  []phaseTimes // each round alone, to show the spread a loaded machine causes
}

func (r appendResult) ledgerRate() float64 { return rate(r.times.events, r.times.ledger) }
func (r appendResult) plainRate() float64  { return rate(r.times.events, r.times.plain) }
func (r appendResult) ratio() float64      { return r.times.ratio() }
func (r appendResult) rowsRate() float64   { return rate(r.times.events, r.times.rows) }
func (r appendResult) rowsRatio() float64  { return r.times.rowsRatio() }

// roundRatios returns the lowest, median and highest ratio of a single round.
func (r appendResult) roundRatios() (lo, mid, hi float64) {
	ratios := make([]float64, len(r.rounds))
	for i, t := range r.rounds {
		ratios[i] = t.ratio()
	}
	slices.Sort(ratios)
	return ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1]
}

// dbInfo describes the database a dialect's figures were taken on.
type dbInfo struct {
	dialect    database.Dialect
	version    string
	durability string
}

// runAppend measures every append case on a fresh database of dialect d.
func runAppend(ctx context.Context, cfg *config, d database.Dialect) ([]appendResult, dbInfo, error) {
	db, err := benchenv.OpenFresh(ctx, d, cfg.urls[d], cfg.tmpDir)
	if err != nil {
		return nil, dbInfo{}, err
	}
	defer db.Close()
	info := dbInfo{dialect: d, version: db.Version, durability: benchenv.Durability(ctx, db.DB)}
	out, err := measureAppend(ctx, cfg, db.DB)
	return out, info, err
}

// measureAppend creates the baseline tables in the migrated database db and runs every
// append case on it.
func measureAppend(ctx context.Context, cfg *config, db *database.DB) ([]appendResult, error) {
	if err := createPlainTables(ctx, db, cfg.plainIndexes); err != nil {
		return nil, err
	}
	stores, err := warmStores(ctx, cfg, db)
	if err != nil {
		return nil, err
	}
	var out []appendResult
	for _, c := range cfg.cases() {
		res, err := runCase(ctx, cfg, stores[c.projections], db.Dialect, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// warmStores returns the two stores on db, without and with the inline projectors, each
// warmed up with cfg.warmup untimed single-event appends.
func warmStores(ctx context.Context, cfg *config, db *database.DB) (map[bool]*eventstore.Store, error) {
	stores := map[bool]*eventstore.Store{}
	for _, withProj := range []bool{false, true} {
		store, err := eventstore.New(db, eventstore.Options{Projectors: projectorsFor(withProj)})
		if err != nil {
			return nil, err
		}
		w := newWorkload(fmt.Sprintf("warmup-%t", withProj), cfg.streams)
		if _, err := round(ctx, store, w, cfg.warmup, 1); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		stores[withProj] = store
	}
	return stores, nil
}

func (c appendCase) String() string {
	return fmt.Sprintf("%d events per transaction, projections %t", c.perTx, c.projections)
}

// runCase runs one case in cfg.rounds rounds, each the ledger part then the plain parts,
// so that a change in the machine's load hits every side alike.
func runCase(ctx context.Context, cfg *config, store *eventstore.Store, d database.Dialect, c appendCase) (appendResult, error) {
	w := newWorkload(fmt.Sprintf("bench-%d-%t", c.perTx, c.projections), cfg.streams)
	res := appendResult{appendCase: c, dialect: d}
	for r := range cfg.rounds {
		txs := c.txs/cfg.rounds + boolInt(r < c.txs%cfg.rounds)
		t, err := round(ctx, store, w, txs, c.perTx)
		if err != nil {
			return res, err
		}
		res.times.add(t)
		res.rounds = append(res.rounds, t)
	}
	return res, nil
}

func projectorsFor(enabled bool) []eventstore.Projector {
	if enabled {
		return projections.All()
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
