package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/migrations"
)

// The backoff between attempts to reach a database that is down at start: it doubles
// from retryFirst up to retryMax.
const (
	retryFirst = time.Second
	retryMax   = 30 * time.Second
)

// waitForDatabase tries until the database answers and its schema is migrated, logging
// each failed attempt, with exponential backoff. It gives up only when ctx ends, or when
// migrating fails on a database that answers (a broken migration does not heal by
// waiting).
func waitForDatabase(ctx context.Context, db *database.DB, logger *slog.Logger, rawURL string) error {
	delay := retryFirst
	for attempt := 1; ; attempt++ {
		err := ping(ctx, db)
		if err == nil {
			if err = migrations.Up(ctx, db); err == nil {
				return nil
			}
			if ping(ctx, db) == nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		logger.Warn("database not available; retrying", "database", database.Redact(rawURL),
			"attempt", attempt, "retry_in", delay.String(), "error", err.Error())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, retryMax)
	}
}

// ping checks once, within pingTimeout, that the database answers.
func ping(ctx context.Context, db *database.DB) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}
