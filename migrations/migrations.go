// Package migrations holds the versioned schema of each SQL dialect, embedded in the
// binary, and applies it with goose (github.com/pressly/goose/v3): a well-kept migration
// library that records applied versions in goose_db_version and runs each file in a
// transaction.
package migrations

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"

	"github.com/mailledger/mailledger/database"
)

//go:embed sqlite/*.sql postgres/*.sql mysql/*.sql
var files embed.FS

// Up applies every migration of db's dialect that has not been applied yet.
func Up(ctx context.Context, db *database.DB) error {
	p, err := provider(db)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate %s: %w", db.Dialect, err)
	}
	return nil
}

// UpTo applies the migrations of db's dialect up to and including version: for tests of
// a migration over data written by an older schema.
func UpTo(ctx context.Context, db *database.DB, version int64) error {
	p, err := provider(db)
	if err != nil {
		return err
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		return fmt.Errorf("migrate %s to %d: %w", db.Dialect, version, err)
	}
	return nil
}

// DownTo undoes the migrations of db's dialect newer than version: for tests of a migration
// over data written before it (the data stays; the schema goes back).
func DownTo(ctx context.Context, db *database.DB, version int64) error {
	p, err := provider(db)
	if err != nil {
		return err
	}
	if _, err := p.DownTo(ctx, version); err != nil {
		return fmt.Errorf("migrate %s down to %d: %w", db.Dialect, version, err)
	}
	return nil
}

// Version reports the newest applied migration version.
func Version(ctx context.Context, db *database.DB) (int64, error) {
	p, err := provider(db)
	if err != nil {
		return 0, err
	}
	return p.GetDBVersion(ctx)
}

func provider(db *database.DB) (*goose.Provider, error) {
	sub, err := fs.Sub(files, string(db.Dialect))
	if err != nil {
		return nil, err
	}
	dialect := map[database.Dialect]goose.Dialect{
		database.SQLite:   goose.DialectSQLite3,
		database.Postgres: goose.DialectPostgres,
		database.MySQL:    goose.DialectMySQL,
	}[db.Dialect]
	return goose.NewProvider(dialect, db.DB, sub, goose.WithGoMigrations(rekeyMigration(db.Dialect)))
}
