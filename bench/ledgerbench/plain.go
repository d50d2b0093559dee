package main

import (
	"context"
	"fmt"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
)

// The two baseline tables: bare tables with the columns, column types, primary key and
// (stream_id, stream_version) unique constraint of events, and nothing else. plainTable
// takes each transaction's rows as one INSERT statement, plainRowsTable as one single-row
// INSERT statement per row (what a plain event table does per event).
const (
	plainTable     = "plain_events"
	plainRowsTable = "plain_events_rows"
)

// plainColumns are the events table's columns, in the order Append inserts them.
const plainColumns = `position, stream_id, stream_type, stream_version, tenant_id, event_type, schema_version, payload, metadata, recorded_at, leaf_hash, chain_hash`

// plainDDL returns the CREATE TABLE of a baseline table in dialect d, with the same types
// as the events table of migrations/<d>/00001_ledger.sql. withIndexes adds the secondary
// index that events also has, (tenant_id, position).
func plainDDL(d database.Dialect, table string, withIndexes bool) []string {
	text, ts, suffix := "TEXT", "TEXT", ""
	switch d {
	case database.Postgres:
		ts = "TIMESTAMPTZ"
	case database.MySQL:
		text, ts = "MEDIUMTEXT", "DATETIME(6)"
		suffix = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
	}
	stmts := []string{`CREATE TABLE ` + table + ` (
    position       BIGINT       PRIMARY KEY,
    stream_id      VARCHAR(128) NOT NULL,
    stream_type    VARCHAR(64)  NOT NULL,
    stream_version BIGINT       NOT NULL,
    tenant_id      VARCHAR(64)  NOT NULL,
    event_type     VARCHAR(128) NOT NULL,
    schema_version INTEGER      NOT NULL,
    payload        ` + text + ` NOT NULL,
    metadata       ` + text + ` NOT NULL,
    recorded_at    ` + ts + ` NOT NULL,
    leaf_hash      CHAR(64)     NOT NULL,
    chain_hash     CHAR(64)     NOT NULL,
    CONSTRAINT ` + table + `_stream_version UNIQUE (stream_id, stream_version)
)` + suffix}
	if withIndexes {
		stmts = append(stmts, `CREATE INDEX `+table+`_tenant ON `+table+` (tenant_id, position)`)
	}
	return stmts
}

// createPlainTables creates both baseline tables in db.
func createPlainTables(ctx context.Context, db *database.DB, withIndexes bool) error {
	for _, table := range []string{plainTable, plainRowsTable} {
		for _, stmt := range plainDDL(db.Dialect, table, withIndexes) {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("create %s: %w", table, err)
			}
		}
	}
	return nil
}

// insertPlain writes recs into plainTable in one transaction with one INSERT statement (a
// multi-row VALUES list when there is more than one record), converting every value
// exactly as eventstore's insert does.
func insertPlain(ctx context.Context, db *database.DB, recs []eventstore.Record) error {
	q := `INSERT INTO ` + plainTable + ` (` + plainColumns + `) VALUES ` + valuesList(len(recs), 12)
	return db.InTx(ctx, func(tx *database.Tx) error {
		_, err := tx.Exec(ctx, q, plainArgs(tx.Dialect, recs)...)
		return err
	})
}

// insertPlainRows writes recs into plainRowsTable in one transaction, one single-row
// INSERT statement per record.
func insertPlainRows(ctx context.Context, db *database.DB, recs []eventstore.Record) error {
	q := `INSERT INTO ` + plainRowsTable + ` (` + plainColumns + `) VALUES ` + valuesList(1, 12)
	return db.InTx(ctx, func(tx *database.Tx) error {
		for i := range recs {
			if _, err := tx.Exec(ctx, q, plainArgs(tx.Dialect, recs[i:i+1])...); err != nil {
				return err
			}
		}
		return nil
	})
}

func plainArgs(d database.Dialect, recs []eventstore.Record) []any {
	args := make([]any, 0, len(recs)*12)
	for i := range recs {
		r := &recs[i]
		args = append(args, r.Position, r.StreamID, r.StreamType, r.StreamVersion, r.TenantID,
			r.EventType, r.SchemaVersion, string(r.Payload), string(r.Metadata),
			database.TimeArg(d, r.RecordedAt), r.LeafHash.String(), r.ChainHash.String())
	}
	return args
}

// valuesList returns "(?, …), (?, …)…" for rows rows of cols columns.
func valuesList(rows, cols int) string { return database.Placeholders(rows, cols) }
