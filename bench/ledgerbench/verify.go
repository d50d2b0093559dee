package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
)

// verifyResult is the measurement of Verify over a populated SQLite ledger.
type verifyResult struct {
	events      int64
	checkpoints int
	populate    time.Duration // appending the events, not part of the figure
	runs        []time.Duration
	info        dbInfo
}

// median is the middle run's duration.
func (v verifyResult) median() time.Duration {
	runs := slices.Clone(v.runs)
	slices.Sort(runs)
	return runs[len(runs)/2]
}

func (v verifyResult) medianRate() float64 { return rate(int(v.events), v.median()) }

// runVerify fills a fresh SQLite ledger with cfg.verifyEvents events in appends of
// cfg.verifyBatch events, signing a checkpoint after each append (the service signs one
// every 1000 events), then times cfg.verifyRuns full Verify passes.
func runVerify(ctx context.Context, cfg *config) (verifyResult, error) {
	db, err := benchenv.OpenFresh(ctx, database.SQLite, "", cfg.tmpDir)
	if err != nil {
		return verifyResult{}, err
	}
	defer db.Close()
	res := verifyResult{info: dbInfo{dialect: database.SQLite, version: db.Version, durability: benchenv.Durability(ctx, db.DB)}}
	store, err := eventstore.New(db.DB, eventstore.Options{Projectors: projectorsFor(true)})
	if err != nil {
		return res, err
	}
	keyDir, err := os.MkdirTemp(cfg.tmpDir, "ledgerbench-keys-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(keyDir)
	key, err := eventstore.LoadOrCreateKey(filepath.Join(keyDir, "keys"), "mailledger-bench")
	if err != nil {
		return res, err
	}
	start := time.Now()
	if res.checkpoints, err = populate(ctx, cfg, store, key); err != nil {
		return res, err
	}
	res.populate = time.Since(start)
	return res, timeVerify(ctx, cfg, store, key, &res)
}

func populate(ctx context.Context, cfg *config, store *eventstore.Store, key *eventstore.Key) (int, error) {
	signer, err := eventstore.NewSigner(store, key, "mailledger-bench")
	if err != nil {
		return 0, err
	}
	w := newWorkload("verify", cfg.streams)
	checkpoints := 0
	for done := 0; done < cfg.verifyEvents; {
		n := min(cfg.verifyBatch, cfg.verifyEvents-done)
		stream, expected, events := w.nextAppend(n)
		if _, err := store.Append(ctx, stream, expected, events...); err != nil {
			return 0, fmt.Errorf("populate: %w", err)
		}
		if _, err := signer.Sign(ctx); err != nil {
			return 0, fmt.Errorf("populate: %w", err)
		}
		done += n
		checkpoints++
	}
	return checkpoints, nil
}

func timeVerify(ctx context.Context, cfg *config, store *eventstore.Store, key *eventstore.Key, res *verifyResult) error {
	for range cfg.verifyRuns {
		start := time.Now()
		rep, err := store.Verify(ctx, key.PublicKey, nil)
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		res.runs = append(res.runs, time.Since(start))
		if rep.Events != int64(cfg.verifyEvents) || rep.Checkpoints != res.checkpoints {
			return fmt.Errorf("verify checked %d events and %d checkpoints; want %d and %d",
				rep.Events, rep.Checkpoints, cfg.verifyEvents, res.checkpoints)
		}
		res.events = rep.Events
	}
	return nil
}
