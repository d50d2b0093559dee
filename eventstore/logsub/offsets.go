package logsub

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/database"
)

// Offset returns the last position consumer finished, 0 when it has not finished one yet.
func Offset(ctx context.Context, db *database.DB, consumer string) (int64, error) {
	var position int64
	err := db.QueryRowContext(ctx, db.Rebind(`SELECT position FROM consumer_offsets WHERE consumer = ?`), consumer).Scan(&position)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read offset of %s: %w", consumer, err)
	}
	return position, nil
}

// saveOffset moves consumer's offset to position; it never moves it back.
func saveOffset(ctx context.Context, db *database.DB, consumer string, position int64) error {
	now := database.TimeArg(db.Dialect, time.Now())
	err := db.InTx(ctx, func(tx *database.Tx) error {
		_, err := tx.Exec(ctx, upsertOffset(db.Dialect), consumer, position, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("save offset of %s: %w", consumer, err)
	}
	return nil
}

func upsertOffset(d database.Dialect) string {
	const insert = `INSERT INTO consumer_offsets (consumer, position, updated_at) VALUES (?, ?, ?) `
	switch d {
	case database.MySQL:
		return insert + `ON DUPLICATE KEY UPDATE position = GREATEST(position, VALUES(position)), updated_at = VALUES(updated_at)`
	case database.SQLite:
		return insert + `ON CONFLICT (consumer) DO UPDATE SET position = MAX(consumer_offsets.position, excluded.position), updated_at = excluded.updated_at`
	default:
		return insert + `ON CONFLICT (consumer) DO UPDATE SET position = GREATEST(consumer_offsets.position, EXCLUDED.position), updated_at = EXCLUDED.updated_at`
	}
}
