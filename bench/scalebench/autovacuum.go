package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mailledger/mailledger/database"
)

// PostgreSQL's autovacuum, as its defaults would run it beside an import (the benchmark
// server runs without the daemon): every autovacuumNaptime, each table whose rows changed
// since its last ANALYZE by more than 50 + 10 % of its rows is analyzed, and each whose
// rows inserted since its last VACUUM exceed 1,000 + 20 % of its rows is vacuumed (which
// also merges the GIN index's pending list), on a connection of its own, throttled by
// autovacuum's default cost delay, while the import goes on. (Until 2026-11-27 the
// benchmark analyzed every table synchronously after every 10th batch, 2,000 messages: 500
// ANALYZE runs of about a second each in a million-message run, a third of its import
// time, at 50 times the daemon's rate at a million rows; docs/performance.md, "PostgreSQL's
// import: where the time goes".)
const (
	autovacuumNaptime       = time.Minute                     // autovacuum_naptime
	autovacuumAnalyzeBase   = 50                              // autovacuum_analyze_threshold
	autovacuumAnalyzeFactor = 0.1                             // autovacuum_analyze_scale_factor
	autovacuumInsertBase    = 1000                            // autovacuum_vacuum_insert_threshold
	autovacuumInsertFactor  = 0.2                             // autovacuum_vacuum_insert_scale_factor
	autovacuumCostDelaySQL  = `SET vacuum_cost_delay = '2ms'` // autovacuum_vacuum_cost_delay
	autovacuumCostLimitSQL  = `SET vacuum_cost_limit = 200`   // autovacuum_vacuum_cost_limit (vacuum_cost_limit)
)

// autovacuumTables is the condition on pg_stat_user_tables of the tables the benchmark
// keeps statistics of (statTables).
var autovacuumTables = `relname IN ('` + strings.ReplaceAll(statTables, ", ", "', '") + `')`

// autovacuum is the daemon's stand-in during one import.
type autovacuum struct {
	stop chan struct{}
	done sync.WaitGroup
	err  error
	runs []string // what it ran, in order ("ANALYZE metadata", "VACUUM message_search")
}

// startAutovacuum starts the stand-in on db when it is PostgreSQL's (nil otherwise).
func startAutovacuum(ctx context.Context, db *database.DB) *autovacuum {
	if db.Dialect != database.Postgres {
		return nil
	}
	a := &autovacuum{stop: make(chan struct{})}
	a.done.Add(1)
	go func() {
		defer a.done.Done()
		every(autovacuumNaptime, a.stop, func() bool {
			if ctx.Err() != nil {
				return false
			}
			a.err = a.pass(ctx, db)
			return a.err == nil
		})
	}()
	return a
}

// Stop waits for a pass under way and returns the first error of any.
func (a *autovacuum) Stop() error {
	if a == nil {
		return nil
	}
	close(a.stop)
	a.done.Wait()
	return a.err
}

// pass analyzes and vacuums the tables past their thresholds.
func (a *autovacuum) pass(ctx context.Context, db *database.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT s.relname, s.n_mod_since_analyze, s.n_ins_since_vacuum, GREATEST(c.reltuples, 0)
		FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.`+autovacuumTables+` ORDER BY s.relname`)
	if err != nil {
		return fmt.Errorf("autovacuum: %w", err)
	}
	var work []string
	for rows.Next() {
		var name string
		var modified, inserted int64
		var tuples float64
		if err := rows.Scan(&name, &modified, &inserted, &tuples); err != nil {
			rows.Close()
			return fmt.Errorf("autovacuum: %w", err)
		}
		vacuum := float64(inserted) > autovacuumInsertBase+autovacuumInsertFactor*tuples
		analyze := float64(modified) > autovacuumAnalyzeBase+autovacuumAnalyzeFactor*tuples
		switch {
		case vacuum && analyze:
			work = append(work, "VACUUM (ANALYZE) "+name)
		case vacuum:
			work = append(work, "VACUUM "+name)
		case analyze:
			work = append(work, "ANALYZE "+name)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("autovacuum: %w", err)
	}
	rows.Close()
	if len(work) == 0 {
		return nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("autovacuum: %w", err)
	}
	defer conn.Close()
	// The connection goes back to the pool: the cost delay must not throttle whatever
	// VACUUM runs on it next (the untimed upkeep after a step).
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `RESET vacuum_cost_delay; RESET vacuum_cost_limit`)
	}()
	for _, stmt := range append([]string{autovacuumCostDelaySQL, autovacuumCostLimitSQL}, work...) {
		if _, err := conn.ExecContext(ctx, stmt); err != nil && ctx.Err() == nil {
			return fmt.Errorf("autovacuum: %s: %w", stmt, err)
		}
	}
	a.runs = append(a.runs, work...)
	return nil
}

// summary says what the stand-in ran during a step, for the progress line.
func (a *autovacuum) summary() string {
	if a == nil || len(a.runs) == 0 {
		return ""
	}
	return "; autovacuum: " + strings.Join(a.runs, ", ")
}
