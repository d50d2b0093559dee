package main

import (
	"context"
	"errors"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/eventstore"
)

// backgroundWork is what serve runs besides the checkpointer: the erasure consumers and
// the keeper of their certificates, the eDiscovery exports (their scheduler consumer and their runs) and the purge schedule.
type backgroundWork struct {
	erasure      *app.Erasure
	exports      *app.Exports
	purger       *app.Purger
	certificates *app.CertificateKeeper
}

// startBackground starts the work that follows the ledger: the consumers of
// app.Background (a watermill Router over the ledger, whose metrics go to svc.reg: the
// erasure assessor and executor, the export scheduler), the export runs (app.Exports.Run:
// jobs left running by an earlier process are failed at start, pending jobs are admitted
// within the EDISCOVERY_MAX_* limits, and on stop the running ones end), the
// app.Checkpointer that signs checkpoints every MAILLEDGER_CHECKPOINT_EVERY events and
// MAILLEDGER_CHECKPOINT_INTERVAL, and the purge schedule every MAILLEDGER_PURGE_INTERVAL
// (none when 0). It is the one place where serve
// wires background work; consumers are added here with bg.AddHandler before Run. It
// returns the function that stops everything and waits until the consumers have saved
// their offsets.
func startBackground(ctx context.Context, svc *service, store *eventstore.Store, signer *eventstore.Signer, work backgroundWork) (func() error, error) {
	bg, err := app.NewBackground(store, app.BackgroundConfig{
		Logger: svc.logger, Registerer: svc.reg, CloseTimeout: shutdownTimeout,
	})
	if err != nil {
		return nil, err
	}
	if work.erasure != nil {
		work.erasure.Register(bg)
	}
	if work.exports != nil {
		work.exports.Register(bg)
	}
	if work.certificates != nil {
		work.certificates.Register(bg)
	}
	checkpointer, err := app.NewCheckpointer(store, signer, app.CheckpointerConfig{
		Every: svc.cfg.CheckpointEvery, Interval: svc.cfg.CheckpointInterval, Logger: svc.logger,
	})
	if err != nil {
		return nil, err
	}
	runs := map[string]func(context.Context) error{"consumers": bg.Run, "checkpointer": checkpointer.Run}
	if work.exports != nil {
		runs["exports"] = work.exports.Run
	}
	if stats := svc.bucketStats(svc.db, svc.logger); stats != nil {
		runs["s3 bucket statistics"] = stats
	}
	if svc.cfg.PurgeInterval > 0 && work.purger != nil {
		schedule := &purgeSchedule{pass: work.purger.RunOnce, interval: svc.cfg.PurgeInterval, logger: svc.logger}
		runs["purge schedule"] = schedule.Run
	} else {
		svc.logger.Info("purge schedule off (MAILLEDGER_PURGE_INTERVAL=0): run `mailledger purge`")
	}
	return runAll(ctx, svc, runs), nil
}

// runAll runs each of runs in its own goroutine until the returned stop function is
// called; stop cancels them and waits for all.
func runAll(ctx context.Context, svc *service, runs map[string]func(context.Context) error) func() error {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, len(runs))
	for name, run := range runs {
		go func() {
			err := run(ctx)
			if err != nil && ctx.Err() == nil {
				svc.logger.Error("background work stopped", "name", name, "error", err.Error())
			}
			done <- err
		}()
	}
	return func() error {
		cancel()
		var errs []error
		for range runs {
			errs = append(errs, <-done)
		}
		return errors.Join(errs...)
	}
}
