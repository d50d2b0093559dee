package app

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/mailledger/mailledger/database"
)

// queryRows runs q (with ?-placeholders) on db and scans every row with scan; what names
// the rows in an error. An empty result is an empty slice, never nil (JSON "[]").
func queryRows[T any](ctx context.Context, db *database.DB, what string, scan func(*sql.Rows) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, db.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
