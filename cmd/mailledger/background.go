package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/mailledger/mailledger/eventstore"
)

// startBackground starts the consumers that follow the ledger and returns the function
// that stops them and waits until they have saved their offsets. It is the one place
// where serve wires its background work.
//
// TODO(background): replace the interim loop below with app.NewBackground (watermill
// Router over the ledger, registering its subscriber metrics with svc.reg) and
// app.Checkpointer once app/background.go and app/checkpointer.go exist.
func startBackground(ctx context.Context, svc *service, store *eventstore.Store, signer *eventstore.Signer) (func() error, error) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() {
		done <- signCheckpoints(ctx, store, signer, svc.logger, svc.cfg.CheckpointEvery, svc.cfg.CheckpointInterval)
	}()
	return func() error {
		cancel()
		return <-done
	}, nil
}

// signCheckpoints signs a checkpoint whenever every events were appended since the last
// one, and at each interval when there are new events, until ctx ends.
func signCheckpoints(ctx context.Context, store *eventstore.Store, signer *eventstore.Signer, logger *slog.Logger, every int64, interval time.Duration) error {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var signed int64
	if cp, err := store.LatestCheckpoint(ctx); err == nil {
		signed = cp.Size
	}
	for {
		wake := store.Appended()
		head, err := store.Head(ctx)
		if err == nil && head.Size-signed >= every {
			signed = sign(ctx, signer, logger, signed)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-ticker.C:
			if err == nil && head.Size > signed {
				signed = sign(ctx, signer, logger, signed)
			}
		}
	}
}

// sign signs a checkpoint of the head and returns its size, or signed when it failed.
func sign(ctx context.Context, signer *eventstore.Signer, logger *slog.Logger, signed int64) int64 {
	cp, err := signer.Sign(ctx)
	if err != nil {
		if ctx.Err() == nil {
			logger.Warn("checkpoint not signed", "error", err.Error())
		}
		return signed
	}
	return cp.Size
}
