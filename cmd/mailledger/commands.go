package main

import (
	"context"
	"fmt"

	"github.com/mailledger/mailledger/migrations"
	"github.com/mailledger/mailledger/projections"
)

// migrate applies the schema to DATABASE_URL and exits.
func (env *environment) migrate(ctx context.Context) error {
	o, closeAll, err := env.open(ctx, migrated)
	if err != nil {
		return err
	}
	defer closeAll()
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
	o, closeAll, err := env.open(ctx, withKey|withLedger) // not migrated: verify changes nothing
	if err != nil {
		return err
	}
	defer closeAll()
	bar := env.newProgress("verifying", "events")
	report, err := o.store.Verify(ctx, o.key.PublicKey, bar.update)
	bar.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "ledger ok: %d events, head %s\n", report.Events, report.ChainHash)
	return nil
}

// rebuildProjections empties every projection table and replays the ledger into it.
func (env *environment) rebuildProjections(ctx context.Context) error {
	o, closeAll, err := env.open(ctx, withLedger)
	if err != nil {
		return err
	}
	defer closeAll()
	bar := env.newProgress("replaying", "events")
	n, err := projections.Rebuild(ctx, o.store, bar.update)
	bar.finish()
	if err != nil {
		return fmt.Errorf("projections rebuild: %w", err)
	}
	fmt.Fprintf(env.stdout, "projections rebuilt: %d events replayed\n", n)
	return nil
}
