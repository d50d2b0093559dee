package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
)

// purge runs one purge pass and exits: the files of the messages past their retention
// (erased ones from the day of their erasure) and under no active legal hold are
// deleted, their metadata is marked deleted and removed from search, and each batch is
// recorded in the ledger (counts only). It prints "purged N messages, H held back by
// legal holds". A failure exits 1; the batches committed before it stay purged and
// recorded.
func (env *environment) purge(ctx context.Context) error {
	o, closeAll, err := env.open(ctx, migrated|withArchive|withLedger)
	if err != nil {
		return err
	}
	defer closeAll()
	purger, err := app.NewPurger(o.store, o.arc, app.PurgerConfig{})
	if err != nil {
		return err
	}
	res, err := purger.RunOnce(ctx)
	if err != nil {
		return fmt.Errorf("%w (purged %d messages before the failure)", err, res.Purged)
	}
	fmt.Fprintln(env.stdout, purgeSummary(res))
	return nil
}

// purgeSummary is the one line that reports a purge pass.
func purgeSummary(res archive.PurgeResult) string {
	return fmt.Sprintf("purged %d messages, %d held back by legal holds", res.Purged, res.HeldBack)
}

// purgePass is one purge pass; *app.Purger's RunOnce.
type purgePass func(ctx context.Context) (archive.PurgeResult, error)

// purgeSchedule runs a purge pass at start and then every interval inside serve. Passes
// run one after another in one goroutine, so two never overlap; a pass that takes longer
// than the interval delays the next one rather than queueing more. A failed pass is
// logged and the schedule goes on.
type purgeSchedule struct {
	pass     purgePass
	interval time.Duration
	logger   *slog.Logger
}

// Run runs the schedule until ctx is done; it then returns nil. A pass in flight when
// ctx ends is cancelled with it (its committed batches stay purged and recorded).
func (p *purgeSchedule) Run(ctx context.Context) error {
	ticker := time.NewTicker(p.interval)
	defer ticker.Stop()
	for {
		p.runOnce(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

func (p *purgeSchedule) runOnce(ctx context.Context) {
	start := time.Now()
	res, err := p.pass(ctx)
	if err != nil {
		if ctx.Err() == nil {
			p.logger.Error("purge pass failed", "purged", res.Purged, "error", err.Error())
		}
		return
	}
	p.logger.Info("purge pass", "purged", res.Purged, "held_back", res.HeldBack,
		"by_tenant", res.ByTenant, "duration_ms", time.Since(start).Milliseconds())
}
