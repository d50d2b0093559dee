package projections_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/migrations"
)

// TestDeadlineMigrationBackfills: the migration that adds gdpr_requests.due_at gives the
// rows already there their creation plus 30 days, on every database.
func TestDeadlineMigrationBackfills(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db := dbtest.OpenUnmigrated(t, d)
		require.NoError(t, migrations.UpTo(ctx, db, 22))
		created := time.Date(2026, 1, 31, 8, 30, 15, 250000000, time.UTC)
		_, err := db.Exec(db.Rebind(`INSERT INTO gdpr_requests (id, request_id, tenant_id, email_addresses, status, legal_hold_ids, created_by, created_at) VALUES (1, 'GDPR-2026-00001', 'default', '[]', 'pending', '[]', 'dpo', ?)`),
			database.TimeArg(d, created))
		require.NoError(t, err)
		require.NoError(t, migrations.Up(ctx, db))
		var due any
		require.NoError(t, db.QueryRow(`SELECT due_at FROM gdpr_requests`).Scan(&due))
		got, err := database.TimeValue(due)
		require.NoError(t, err)
		assert.Equal(t, created.Add(30*24*time.Hour), got.UTC())
	})
}
