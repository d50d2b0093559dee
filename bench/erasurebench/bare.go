package main

import (
	"context"
	"fmt"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
)

// bareQueries are the baseline of the assessment: the simplest correct SQL a DBA would
// write by hand for the four numbers of an assessment, one query per question, with the
// same notion of a visible message (not purged, not erased).
var bareQueries = []struct{ name, sql string }{
	{"as sender", `SELECT COUNT(*) FROM metadata
		WHERE tenant_id = ? AND "from" IN (%[1]s) AND deleted = 0 AND erased_by IS NULL`},
	{"as recipient", `SELECT COUNT(DISTINCT r.id) FROM rcpt r JOIN metadata m ON m.id = r.id
		WHERE r."to" IN (%[1]s) AND m.tenant_id = ? AND m.deleted = 0 AND m.erased_by IS NULL`},
	// A DBA's first try, "WHERE id IN (SELECT … UNION SELECT …) AND tenant_id = ?", and
	// the plain join alike are planned by SQLite 3.54 (no statistics) as a walk of the
	// whole tenant through an index on tenant_id, 0.37 s at 1,000,000 rows; the DBA
	// would see that in EXPLAIN QUERY PLAN and fix the join order with CROSS JOIN, as %[2]s
	// below does on SQLite.
	{"affected, attachments", `SELECT COUNT(*), COALESCE(SUM(m.attachments), 0)
		FROM (SELECT id FROM metadata WHERE tenant_id = ? AND "from" IN (%[1]s) UNION SELECT id FROM rcpt WHERE "to" IN (%[1]s)) a
		%[2]s metadata m ON m.id = a.id WHERE m.tenant_id = ? AND m.deleted = 0 AND m.erased_by IS NULL`},
}

// bareScope runs the bare queries one after the other and returns their numbers.
func bareScope(ctx context.Context, db *database.DB, tenant string, addrs []string) (archive.Scope, error) {
	in := database.InList(len(addrs))
	list := make([]any, len(addrs))
	for i, a := range addrs {
		list[i] = a
	}
	var s archive.Scope
	for i, q := range bareQueries {
		join := "JOIN"
		if db.Dialect == database.SQLite {
			join = "CROSS JOIN"
		}
		sql := db.Rebind(fmt.Sprintf(q.sql, in, join))
		var err error
		switch i {
		case 0:
			err = db.QueryRowContext(ctx, sql, append([]any{tenant}, list...)...).Scan(&s.AsSender)
		case 1:
			err = db.QueryRowContext(ctx, sql, append(append([]any{}, list...), tenant)...).Scan(&s.AsRecipient)
		default:
			args := append(append(append([]any{tenant}, list...), list...), tenant)
			err = db.QueryRowContext(ctx, sql, args...).Scan(&s.Affected, &s.Attachments)
		}
		if err != nil {
			return s, fmt.Errorf("bare query %q: %w", q.name, err)
		}
	}
	return s, nil
}
