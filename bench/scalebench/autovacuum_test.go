package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// The autovacuum stand-in analyzes and vacuums exactly the tables past the daemon's
// default thresholds, and leaves the others alone.
func TestAutovacuumPassFollowsTheThresholds(t *testing.T) {
	ctx := context.Background()
	f, err := benchenv.OpenFresh(ctx, database.Postgres, serverURL(t, database.Postgres), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(f.Close)

	// rcpt: 1,500 rows inserted, past both thresholds of an empty table (50 changed, 1,000
	// inserted); attachment: 40 rows, past neither.
	_, err = f.DB.ExecContext(ctx, `INSERT INTO rcpt (id, "to", todomain, kind) SELECT g, 'a' || g || '@example.com', 'example.com', 'to' FROM generate_series(1, 1500) g`)
	require.NoError(t, err)
	_, err = f.DB.ExecContext(ctx, `INSERT INTO attachment (message_id, seq, name, type, size, digest) SELECT g, 1, 'f', 'text/plain', 1, 'd' FROM generate_series(1, 40) g`)
	require.NoError(t, err)

	a := &autovacuum{stop: make(chan struct{})}
	// The statistics of the inserts reach pg_stat_user_tables within about a second.
	require.Eventually(t, func() bool {
		a.runs = nil
		require.NoError(t, a.pass(ctx, f.DB))
		return len(a.runs) > 0
	}, 10*time.Second, 200*time.Millisecond)
	assert.Equal(t, []string{"VACUUM (ANALYZE) rcpt"}, a.runs)

	var vacuumed, analyzed bool
	require.NoError(t, f.DB.QueryRowContext(ctx, `SELECT last_vacuum IS NOT NULL, last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'rcpt'`).Scan(&vacuumed, &analyzed))
	assert.True(t, vacuumed && analyzed, fmt.Sprintf("rcpt vacuumed %v, analyzed %v", vacuumed, analyzed))
	assert.Equal(t, "; autovacuum: VACUUM (ANALYZE) rcpt", a.summary())
	assert.Empty(t, (*autovacuum)(nil).summary(), "no stand-in on SQLite and MySQL")
	assert.NoError(t, (*autovacuum)(nil).Stop())
}
