package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mailledger/mailledger/database"
)

// StorageLocal is the storage mode of LocalStore; archive/s3store's is "s3".
const StorageLocal = "local"

// ErrMixedStorage means the archive's message files are in one storage (local files or
// an object store) and the configuration names the other: mixed mode is not supported.
var ErrMixedStorage = errors.New("mixed storage mode is not supported")

// storageModer is a BlobStore that names its storage mode; a store that does not is
// taken for local files.
type storageModer interface{ StorageMode() string }

// StorageMode is "local".
func (s *LocalStore) StorageMode() string { return StorageLocal }

func storageModeOf(b BlobStore) string {
	if m, ok := b.(storageModer); ok {
		return m.StorageMode()
	}
	return StorageLocal
}

// querier is what the storage mode is read through: the database or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// CheckStorageMode is the start-up check: it fails with ErrMixedStorage when the archive
// recorded another storage mode than its blob store's. An archive without a recorded mode
// that already holds messages stored them as local files (the only mode before the
// object store); that is recorded now. An empty archive records its mode with its first
// message (Commit).
func (a *Archive) CheckStorageMode(ctx context.Context) error {
	return checkStorageMode(ctx, a.db.Dialect, a.db.DB, storageModeOf(a.blobs), false)
}

// recordStorageMode is Commit's part: inside the first commit's transaction it records
// the mode, or checks it against the recorded one. Once done, later commits skip it.
func (a *Archive) recordStorageMode(ctx context.Context, tx *database.Tx) error {
	if a.modeRecorded.Load() {
		return nil
	}
	return checkStorageMode(ctx, tx.Dialect, tx.Tx, storageModeOf(a.blobs), true)
}

func checkStorageMode(ctx context.Context, d database.Dialect, q querier, mode string, record bool) error {
	recorded, err := readStorageMode(ctx, d, q)
	if err != nil {
		return err
	}
	if recorded == "" {
		if recorded, err = legacyStorageMode(ctx, q); err != nil {
			return err
		}
	}
	if recorded == "" && record {
		recorded = mode
	}
	if recorded == "" {
		return nil
	}
	if recorded != mode {
		return fmt.Errorf("%w: the archive's message files are stored in %q mode (recorded with its first message), and this configuration uses %q; choose the storage before archiving starts", ErrMixedStorage, recorded, mode)
	}
	return writeStorageMode(ctx, d, q, recorded)
}

const storageModeName = "storage_mode"

func readStorageMode(ctx context.Context, d database.Dialect, q querier) (string, error) {
	var mode string
	err := q.QueryRowContext(ctx, database.Rebind(d, `SELECT value FROM archive_settings WHERE name = ?`), storageModeName).Scan(&mode)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("storage mode: %w", err)
	}
	return mode, nil
}

// legacyStorageMode is "local" for an archive that holds messages but no recorded mode.
func legacyStorageMode(ctx context.Context, q querier) (string, error) {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM metadata LIMIT 1`).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("storage mode: %w", err)
	}
	return StorageLocal, nil
}

// writeStorageMode records mode unless a mode is recorded already.
func writeStorageMode(ctx context.Context, d database.Dialect, q querier, mode string) error {
	stmt := map[database.Dialect]string{
		database.SQLite:   `INSERT OR IGNORE INTO archive_settings (name, value) VALUES (?, ?)`,
		database.Postgres: `INSERT INTO archive_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
		database.MySQL:    `INSERT IGNORE INTO archive_settings (name, value) VALUES (?, ?)`,
	}[d]
	if _, err := q.ExecContext(ctx, database.Rebind(d, stmt), storageModeName, mode); err != nil {
		return fmt.Errorf("storage mode: %w", err)
	}
	return nil
}
