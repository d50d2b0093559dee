package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/s3store"
	"github.com/mailledger/mailledger/database"
)

// readObjectStore reads the object store's S3_* variables (docs/operations.md, "Object
// storage (S3)"); a problem, S3_SPREAD_IN_BUCKETS among them, is a usage error.
func (env *environment) readObjectStore(o *opened) error {
	cfg, err := s3store.FromEnv(env.getenv)
	if err != nil {
		return usageError(err)
	}
	o.s3cfg = cfg
	return nil
}

// openBlobs returns the message store: the S3 store when S3_HOSTNAME is set (its upload
// workers run until closeBlobs), else the files under $MAILLEDGER_DATA_DIR/store.
func (o *opened) openBlobs(logger *slog.Logger) (archive.BlobStore, error) {
	if !o.s3cfg.Enabled() {
		blobs, err := archive.NewLocalStore(o.cfg.StoreDir())
		if err != nil {
			return nil, fmt.Errorf("message store: %w", err)
		}
		return blobs, nil
	}
	logger.Info("message files go to the object store", "s3", o.s3cfg)
	s, err := s3store.New(o.s3cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("object store: %w", err)
	}
	o.s3 = s
	return s, nil
}

// closeBlobs waits up to drain for the object store's uploads to finish, then stops
// them; files not uploaded by then stay staged and go up after the next start.
func (o *opened) closeBlobs(drain time.Duration) {
	if o.s3 == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	_ = o.s3.WaitUploaded(ctx)
	_ = o.s3.Close()
}

// commandDrain is how long a command but serve waits at its end for its uploads.
const commandDrain = time.Minute

// bucketStats is serve's hourly bucket statistics run; nil without an object store.
func (o *opened) bucketStats(db *database.DB, logger *slog.Logger) func(context.Context) error {
	if o.s3 == nil {
		return nil
	}
	job := &s3store.StatsJob{Store: o.s3, DB: db, Logger: logger}
	return job.Run
}
