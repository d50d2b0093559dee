package main

import (
	"context"
	"errors"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/eventstore"
)

// startBackground starts the work that follows the ledger: the consumers of
// app.Background (a watermill Router over the ledger, whose metrics go to svc.reg) and
// the app.Checkpointer that signs checkpoints every MAILLEDGER_CHECKPOINT_EVERY events
// and MAILLEDGER_CHECKPOINT_INTERVAL. It is the one place where serve wires background
// work; consumers are added here with bg.AddHandler before Run. It returns the function
// that stops everything and waits until the consumers have saved their offsets.
func startBackground(ctx context.Context, svc *service, store *eventstore.Store, signer *eventstore.Signer) (func() error, error) {
	bg, err := app.NewBackground(store, app.BackgroundConfig{
		Logger: svc.logger, Registerer: svc.reg, CloseTimeout: shutdownTimeout,
	})
	if err != nil {
		return nil, err
	}
	checkpointer, err := app.NewCheckpointer(store, signer, app.CheckpointerConfig{
		Every: svc.cfg.CheckpointEvery, Interval: svc.cfg.CheckpointInterval, Logger: svc.logger,
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 2)
	for name, run := range map[string]func(context.Context) error{"consumers": bg.Run, "checkpointer": checkpointer.Run} {
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
		return errors.Join(<-done, <-done)
	}, nil
}
