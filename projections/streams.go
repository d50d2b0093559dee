package projections

import (
	"context"
	"fmt"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
)

// Streams projects ledger_streams: one row per stream with its type, tenant, version and
// first and last positions, so that auditors can list the ledger's aggregates without
// scanning the log.
type Streams struct{}

var _ eventstore.Projector = Streams{}

// Name implements eventstore.Projector.
func (Streams) Name() string { return "ledger_streams" }

// Tables implements eventstore.Projector.
func (Streams) Tables() []string { return []string{"ledger_streams"} }

// Project implements eventstore.Projector: it runs the statement that AppendStatements
// gives for the one record, so that appends and rebuilds write ledger_streams with the
// same SQL (TestProjectionPathsAgree checks the rows).
func (s Streams) Project(ctx context.Context, tx *database.Tx, rec *eventstore.Record) error {
	for _, st := range s.AppendStatements(tx.Dialect, []eventstore.Record{*rec}) {
		if _, err := tx.Exec(ctx, st.Query, st.Args...); err != nil {
			return wrap(err)
		}
	}
	return nil
}

var _ eventstore.StatementProjector = Streams{}

// AppendStatements implements eventstore.StatementProjector: the records of one append,
// all of one stream, become one INSERT (a new stream) or one UPDATE, with the same row as
// Project gives record by record.
func (Streams) AppendStatements(d database.Dialect, recs []eventstore.Record) []eventstore.Statement {
	first, last := &recs[0], &recs[len(recs)-1]
	at := database.TimeArg(d, last.RecordedAt)
	if first.StreamVersion == 1 {
		return []eventstore.Statement{{Query: `INSERT INTO ledger_streams (stream_id, stream_type, tenant_id, version, first_position, last_position, last_event_type, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			Args: []any{first.StreamID, first.StreamType, first.TenantID, last.StreamVersion, first.Position, last.Position, last.EventType,
				database.TimeArg(d, first.RecordedAt), at}}}
	}
	return []eventstore.Statement{{Query: `UPDATE ledger_streams SET version = ?, last_position = ?, last_event_type = ?, updated_at = ? WHERE stream_id = ?`,
		Args: []any{last.StreamVersion, last.Position, last.EventType, at, last.StreamID}}}
}

func wrap(err error) error {
	if err != nil {
		return fmt.Errorf("ledger_streams: %w", err)
	}
	return nil
}
