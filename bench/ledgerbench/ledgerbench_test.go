package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

var testTime = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// smallConfig is a run small enough for a test: a few transactions of each shape.
func smallConfig(t *testing.T) *config {
	t.Helper()
	cfg, err := parseFlags([]string{"-single-txs", "6", "-batch-txs", "3", "-batch-size", "10",
		"-rounds", "2", "-warmup", "2", "-streams", "4", "-verify-events", "250", "-verify-batch", "100",
		"-verify-runs", "2", "-tmpdir", t.TempDir()}, io.Discard)
	require.NoError(t, err)
	return cfg
}

// TestPlainTablesMatchEvents checks that both baseline tables have the events table's
// columns, types and nullability, and its unique (stream_id, stream_version) constraint.
func TestPlainTablesMatchEvents(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db := dbtest.Open(t, d)
		require.NoError(t, createPlainTables(ctx, db, true))
		for _, table := range []string{plainTable, plainRowsTable} {
			assert.Equal(t, columnsOf(t, db, "events"), columnsOf(t, db, table))
			dup := `INSERT INTO ` + table + ` (` + plainColumns + `) VALUES (?, 's', 't', 1, 'x', 'e', 1, '{}', '{}', ?, 'h', 'c')`
			at := database.TimeArg(d, testTime)
			_, err := db.ExecContext(ctx, db.Rebind(dup), 1, at)
			require.NoError(t, err)
			_, err = db.ExecContext(ctx, db.Rebind(dup), 2, at)
			assert.Error(t, err, "%s: a second row of stream s at version 1 must violate the unique constraint", table)
		}
	})
}

// TestRoundInsertsTheLedgersRows checks the fairness of the comparison: after a run, the
// one-statement baseline holds exactly the rows of the events table, value for value, and
// the row-by-row baseline exactly those of the multi-event transactions.
func TestRoundInsertsTheLedgersRows(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db := dbtest.Open(t, d)
		cfg := smallConfig(t)
		results, err := measureAppend(ctx, cfg, db)
		require.NoError(t, err)
		require.Len(t, results, 4, "1 and 10 events per transaction, without and with projections")
		for _, r := range results {
			assert.Equal(t, r.txs*r.perTx, r.times.events, "%s", r.appendCase)
			assert.Positive(t, r.ledgerRate(), "%s", r.appendCase)
			assert.Positive(t, r.plainRate(), "%s", r.appendCase)
			assert.Len(t, r.rounds, cfg.rounds, "%s", r.appendCase)
			assert.Equal(t, r.perTx > 1, r.times.rows > 0, "%s: row-by-row baseline measured only for several rows per tx", r.appendCase)
		}
		events, plain, same := countRows(t, db, plainTable)
		want := 2*cfg.warmup + 2*(cfg.singleTxs+cfg.batchTxs*cfg.batchSize)
		assert.Equal(t, want, events, "events rows")
		assert.Equal(t, events, plain, "baseline rows")
		assert.Equal(t, events, same, "baseline rows equal to an events row in every column")
		_, rows, sameRows := countRows(t, db, plainRowsTable)
		assert.Equal(t, 2*cfg.batchTxs*cfg.batchSize, rows, "row-by-row baseline rows")
		assert.Equal(t, rows, sameRows, "row-by-row baseline rows equal to an events row in every column")
	})
}

func TestVerifyBenchmarkChecksEveryEvent(t *testing.T) {
	cfg := smallConfig(t)
	res, err := runVerify(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, int64(250), res.events)
	assert.Equal(t, 3, res.checkpoints, "one checkpoint per append of at most 100 events")
	assert.Len(t, res.runs, 2)
	assert.Positive(t, res.medianRate())
}

func TestParseFlagsRejectsBadValues(t *testing.T) {
	for _, args := range [][]string{
		{"-rounds", "0"}, {"-verify-events", "0"}, {"-dialects", "sqlite,oracle"},
	} {
		_, err := parseFlags(args, io.Discard)
		assert.Error(t, err, "%v", args)
	}
	cfg, err := parseFlags([]string{"-projections=false"}, io.Discard)
	require.NoError(t, err)
	assert.Len(t, cfg.cases(), 2, "without projections only the bare ledger is measured")
}

// columnsOf lists name, type and nullability of table's columns in order.
func columnsOf(t *testing.T, db *database.DB, table string) []string {
	t.Helper()
	q := map[database.Dialect]string{
		database.SQLite: `SELECT name, type, "notnull" FROM pragma_table_info(?) ORDER BY cid`,
		database.Postgres: `SELECT column_name, data_type || COALESCE('(' || character_maximum_length || ')', ''), is_nullable
			FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`,
		database.MySQL: `SELECT column_name, column_type, is_nullable
			FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position`,
	}[db.Dialect]
	rows, err := db.QueryContext(context.Background(), db.Rebind(q), table)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name, typ, nullable string
		require.NoError(t, rows.Scan(&name, &typ, &nullable))
		out = append(out, fmt.Sprintf("%s %s %s", name, strings.ToLower(typ), nullable))
	}
	require.NoError(t, rows.Err())
	require.Len(t, out, 12, "columns of %s", table)
	return out
}

// countRows counts the events rows, the rows of the baseline table, and the baseline rows
// equal to an events row in every column.
func countRows(t *testing.T, db *database.DB, table string) (events, plain, same int) {
	t.Helper()
	ctx := context.Background()
	var on []string
	for _, c := range strings.Split(plainColumns, ", ") {
		on = append(on, "p."+c+" = e."+c)
	}
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events`).Scan(&events))
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&plain))
	join := `SELECT COUNT(*) FROM events e JOIN ` + table + ` p ON ` + strings.Join(on, " AND ")
	require.NoError(t, db.QueryRowContext(ctx, join).Scan(&same))
	return events, plain, same
}
