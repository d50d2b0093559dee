package dbtest

import (
	"context"
	"testing"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/migrations"
)

// TestMigrations applies the whole schema on every dialect, twice (the second run is a
// no-op), and checks the quoted column names work.
func TestMigrations(t *testing.T) {
	Run(t, func(t *testing.T, d database.Dialect) {
		db := Open(t, d)
		ctx := context.Background()
		if err := migrations.Up(ctx, db); err != nil {
			t.Fatalf("second migrate: %v", err)
		}
		v, err := migrations.Version(ctx, db)
		if err != nil || v < 2 {
			t.Fatalf("version %d, err %v; want >= 2", v, err)
		}
		if _, err := db.ExecContext(ctx, db.Rebind(`SELECT "from", fromdomain FROM metadata WHERE "from" = ?`), "x@y"); err != nil {
			t.Fatalf("quoted column: %v", err)
		}
	})
}
