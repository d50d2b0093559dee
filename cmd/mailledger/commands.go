package main

import (
	"context"
	"fmt"

	"github.com/mailledger/mailledger/migrations"
	"github.com/mailledger/mailledger/projections"
)

// migrate applies the schema to DATABASE_URL and exits.
func (env *environment) migrate(ctx context.Context) error {
	o, err := env.open(ctx, 0)
	if err != nil {
		return err
	}
	defer o.db.Close()
	version, err := migrations.Version(ctx, o.db)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "migrated %s database to version %d\n", o.db.Dialect, version)
	return nil
}

// verify re-hashes the whole ledger and checks its checkpoints with the ledger's key. A
// broken ledger exits 1 naming the first bad position.
func (env *environment) verify(ctx context.Context) error {
	cfg, err := env.config()
	if err != nil {
		return err
	}
	key, err := loadKey(cfg)
	if err != nil {
		return err
	}
	db, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := newStore(db, nil)
	if err != nil {
		return err
	}
	bar := env.newProgress("verifying", "events")
	report, err := store.Verify(ctx, key.PublicKey, bar.update)
	bar.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "ledger ok: %d events, head %s\n", report.Events, report.ChainHash)
	return nil
}

// rebuildProjections empties every projection table and replays the ledger into it.
func (env *environment) rebuildProjections(ctx context.Context) error {
	cfg, err := env.config()
	if err != nil {
		return err
	}
	db, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := newStore(db, nil)
	if err != nil {
		return err
	}
	bar := env.newProgress("replaying", "events")
	n, err := projections.Rebuild(ctx, store, bar.update)
	bar.finish()
	if err != nil {
		return fmt.Errorf("projections rebuild: %w", err)
	}
	fmt.Fprintf(env.stdout, "projections rebuilt: %d events replayed\n", n)
	return nil
}
