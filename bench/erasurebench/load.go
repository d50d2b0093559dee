package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mailledger/mailledger/database"
)

// erasedBefore marks the subject's messages that an earlier request erased already.
const erasedBefore = "GDPR-2025-00001"

// loader writes a world into a fresh, migrated database on one dedicated connection, with
// the bulk SQL of its dialect: the background rows come from INSERT … SELECT over a
// number generator (a recursive CTE on SQLite, generate_series on PostgreSQL) joined to
// a table of the address pool, the subject's rows and the holds from multi-row INSERTs.
// The secondary indexes of the filled tables are dropped first and created again at the
// end, as a bulk load does: the database ends with exactly the migrated schema.
type loader struct {
	d    database.Dialect
	conn *sql.Conn
	w    *world
}

// load fills db with w; withIndex also fills the full-text index for every message.
func load(ctx context.Context, db *database.DB, w *world, withIndex bool) error {
	if db.Dialect != database.SQLite && db.Dialect != database.Postgres {
		return fmt.Errorf("erasurebench generates data for sqlite and postgres only, not %s", db.Dialect)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	l := &loader{d: db.Dialect, conn: conn, w: w}
	if err := l.session(ctx, true); err != nil {
		return err
	}
	defer func() { _ = l.session(context.WithoutCancel(ctx), false) }()
	tables := []string{"metadata", "rcpt", "address_role"}
	if withIndex {
		tables = append(tables, "message_search")
	}
	indexes, err := l.dropIndexes(ctx, tables)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(indexes, func(def string) bool { return strings.Contains(def, bareRcptIndex) }) {
		// The archive reads rcpt by message id only; the bare queries ask it by address,
		// and the DBA who wrote them would index it so.
		indexes = append(indexes, `CREATE INDEX `+bareRcptIndex+` ON rcpt ("to", id)`)
	}
	steps := []func(context.Context) error{l.addressTable, l.background, l.subjectRows, l.dateKeys, l.roleRows, l.holdRows}
	if withIndex {
		steps = append(steps, l.searchRows)
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	for _, def := range indexes {
		if err := l.exec(ctx, def); err != nil {
			return fmt.Errorf("recreate index: %w", err)
		}
	}
	return l.finish(ctx)
}

// bareRcptIndex is the index of rcpt by recipient that the bare queries (bareQueries) need.
const bareRcptIndex = "bare_rcpt_to"

// dateKeys sets every message's date key (archive.DateKey) as the migration that added it
// does: seconds since 1900 << 30 | the id's low 30 bits.
func (l *loader) dateKeys(ctx context.Context) error {
	secs := `CAST(strftime('%s', msgdate) AS INTEGER)`
	if l.d == database.Postgres {
		secs = `FLOOR(EXTRACT(EPOCH FROM msgdate))::BIGINT`
	}
	q := `UPDATE metadata SET datekey = ((` + secs + ` + 2208988800) << 30) | (id & 1073741823)`
	if err := l.exec(ctx, q); err != nil {
		return fmt.Errorf("date keys: %w", err)
	}
	return nil
}

// roleRows fills address_role, which the erasure reads, from the metadata and rcpt rows
// just written, as the migration does for older archives: the generated addresses are
// plain lower-case keys, one From each, so these are the rows an import would write.
func (l *loader) roleRows(ctx context.Context) error {
	for _, q := range []string{
		`INSERT INTO address_role (id, role, addr, domain, datekey) SELECT id, 1, "from", fromdomain, datekey FROM metadata WHERE "from" <> ''`,
		`INSERT INTO address_role (id, role, addr, domain, datekey) SELECT DISTINCT r.id, 2, r."to", r.todomain, m.datekey FROM rcpt r JOIN metadata m ON m.id = r.id`,
	} {
		if err := l.exec(ctx, q); err != nil {
			return fmt.Errorf("address roles: %w", err)
		}
	}
	return nil
}

func (l *loader) exec(ctx context.Context, q string, args ...any) error {
	_, err := l.conn.ExecContext(ctx, database.Rebind(l.d, q), args...)
	return err
}

// session relaxes durability for the load (on this connection only) and restores it.
func (l *loader) session(ctx context.Context, bulk bool) error {
	var stmts []string
	switch {
	case l.d == database.SQLite && bulk:
		stmts = []string{"PRAGMA synchronous = OFF", "PRAGMA cache_size = -262144"}
	case l.d == database.SQLite:
		stmts = []string{"PRAGMA synchronous = FULL", "PRAGMA cache_size = -2000"}
	case bulk:
		stmts = []string{"SET synchronous_commit = off", "SET maintenance_work_mem = '256MB'"}
	default:
		stmts = []string{"RESET synchronous_commit", "RESET maintenance_work_mem"}
	}
	for _, s := range stmts {
		if err := l.exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// dropIndexes drops the secondary indexes of tables (those that back no constraint) and
// returns the statements that create them again.
func (l *loader) dropIndexes(ctx context.Context, tables []string) ([]string, error) {
	q := `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (` + quoteList(tables) + `)`
	if l.d == database.Postgres {
		q = `SELECT ci.relname, pg_get_indexdef(ci.oid) FROM pg_index x JOIN pg_class ci ON ci.oid = x.indexrelid
			JOIN pg_class t ON t.oid = x.indrelid WHERE t.relname IN (` + quoteList(tables) + `)
			AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = ci.oid)`
	}
	rows, err := l.conn.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list indexes: %w", err)
	}
	var names, defs []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			rows.Close()
			return nil, err
		}
		names, defs = append(names, name), append(defs, def)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, name := range names {
		if err := l.exec(ctx, `DROP INDEX `+name); err != nil {
			return nil, fmt.Errorf("drop index %s: %w", name, err)
		}
	}
	return defs, nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}

// addressTable writes the pool into bench_addr(n, addr, domain), n from 0.
func (l *loader) addressTable(ctx context.Context) error {
	if err := l.exec(ctx, `CREATE TABLE bench_addr (n BIGINT PRIMARY KEY, addr VARCHAR(255) NOT NULL, domain VARCHAR(255) NOT NULL)`); err != nil {
		return err
	}
	return l.insertRows(ctx, `INSERT INTO bench_addr (n, addr, domain) VALUES `, 3, len(l.w.pool), func(i int) []any {
		return []any{i, l.w.pool[i].addr, l.w.pool[i].domain}
	})
}

// insertRows inserts n rows of cols columns in multi-row statements inside one
// transaction; row(i) gives the values of row i.
func (l *loader) insertRows(ctx context.Context, head string, cols, n int, row func(i int) []any) error {
	const perStmt = 400
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	for start := 0; start < n; start += perStmt {
		end := min(start+perStmt, n)
		args := make([]any, 0, (end-start)*cols)
		for i := start; i < end; i++ {
			args = append(args, row(i)...)
		}
		q := head + database.Placeholders(end-start, cols)
		if _, err := tx.ExecContext(ctx, database.Rebind(l.d, q), args...); err != nil {
			return fmt.Errorf("%s…: %w", head[:min(len(head), 40)], err)
		}
	}
	return tx.Commit()
}

// Expressions of the background generator over message number g.i (see background).
const (
	// rcptCount gives 1 recipient to 60 % of the messages, 2 to 30 %, 3 to 10 %.
	rcptCount = `((g.i * 2971) % 10)`
	// attachMix is the mapping of attachmentCount.
	attachMix = `CASE WHEN (g.i * 7717) % 100 < 70 THEN 0 WHEN (g.i * 7717) % 100 < 90 THEN 1 WHEN (g.i * 7717) % 100 < 97 THEN 2 ELSE 3 + ((g.i * 7717) % 100) % 3 END`
)

// background writes every message that is not the subject's: metadata in one statement,
// then its recipients in three (the first, second and third recipient of each message).
// Message i is sent by pool address h*h/A, h = (i*40503) mod A (so that a few addresses
// send much more than the others), to addresses h + k*A/4 (mod A), k = 1..3.
func (l *loader) background(ctx context.Context) error {
	w, a := l.w, int64(len(l.w.pool))
	mix := `((g.i * 40503) % ` + itoa(a) + `)`
	notSubject := `(g.i % ` + itoa(int64(w.stride)) + ` <> 0 OR g.i > ` + itoa(int64(len(w.subject))*int64(w.stride)) + `)`
	spacing := int64(w.spacing.Seconds())
	arrived := itoa(w.start.Unix()-spacing) + ` + g.i * ` + itoa(spacing)
	sent := l.timestamp(arrived + ` - (g.i * 13) % 600`)
	meta := `INSERT INTO metadata (id, tenant_id, "from", fromdomain, subject, spam, arrived, sent, msgdate, retained, deleted, size, attachments, message_id, in_reply_to, refs, digest, bodydigest, key_id)
		SELECT g.i, ?, a.addr, a.domain, 'Re: report ' || g.i, CASE WHEN g.i % 50 = 0 THEN 1 ELSE 0 END, ` +
		l.timestamp(arrived) + `, ` + sent + `, ` + sent + `, ` + l.timestamp(arrived+` + 315360000`) + `,
		0, 2000 + (g.i * 7919) % 200000, ` + attachMix + `, '<' || g.i || '@bench.example>', '', '', ` + l.hex64(`g.i`) + `, ` + l.hex64(`g.i + 1000000000`) + `, 'bench'
		FROM ` + l.numbers(w.messages) + ` JOIN bench_addr a ON a.n = ` + mix + ` * ` + mix + ` / ` + itoa(a) + ` WHERE ` + notSubject
	if err := l.exec(ctx, l.withNumbers(w.messages)+meta, benchTenant); err != nil {
		return fmt.Errorf("background metadata: %w", err)
	}
	step := max(1, a/4)
	for k, cond := range []string{`1 = 1`, rcptCount + ` >= 6`, rcptCount + ` = 9`} {
		kind := []string{`'to'`, `CASE WHEN g.i % 2 = 0 THEN 'to' ELSE 'cc' END`, `'cc'`}[k]
		q := `INSERT INTO rcpt (id, "to", todomain, kind) SELECT g.i, a.addr, a.domain, ` + kind + ` FROM ` + l.numbers(w.messages) +
			` JOIN bench_addr a ON a.n = (` + mix + ` + ` + itoa(int64(k+1)*step) + `) % ` + itoa(a) + ` WHERE ` + notSubject + ` AND ` + cond
		if err := l.exec(ctx, l.withNumbers(w.messages)+q); err != nil {
			return fmt.Errorf("background rcpt %d: %w", k+1, err)
		}
	}
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// numbers is the source of message numbers 1..n as g(i); withNumbers its prefix.
func (l *loader) numbers(n int) string {
	if l.d == database.Postgres {
		return fmt.Sprintf(`generate_series(1::bigint, %d::bigint) AS g(i)`, n)
	}
	return `g`
}

func (l *loader) withNumbers(n int) string {
	if l.d == database.Postgres {
		return ""
	}
	return fmt.Sprintf(`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < %d) `, n)
}

// timestamp turns Unix seconds into the dialect's timestamp (database.TimeArg's text on
// SQLite).
func (l *loader) timestamp(secs string) string {
	if l.d == database.Postgres {
		return `to_timestamp(` + secs + `)`
	}
	return `strftime('%Y-%m-%dT%H:%M:%S', ` + secs + `, 'unixepoch') || '.000000Z'`
}

// hex64 is the digest column: expr as 64 hexadecimal digits.
func (l *loader) hex64(expr string) string {
	if l.d == database.Postgres {
		return `lpad(to_hex(` + expr + `), 64, '0')`
	}
	return `printf('%064x', ` + expr + `)`
}

// subjectRows writes the subject's messages and their recipients.
func (l *loader) subjectRows(ctx context.Context) error {
	w := l.w
	head := `INSERT INTO metadata (id, tenant_id, "from", fromdomain, subject, spam, arrived, sent, msgdate, retained, deleted, size, attachments, message_id, in_reply_to, refs, digest, bodydigest, key_id, erased_by) VALUES `
	err := l.insertRows(ctx, head, 20, len(w.subject), func(j int) []any {
		m := w.subject[j]
		at := w.arrival(m.id)
		deleted, erasedBy := 0, any(nil)
		switch m.hidden {
		case "deleted":
			deleted = 1
		case "erased":
			erasedBy = erasedBefore
		}
		return []any{m.id, benchTenant, m.from, domainOf(m.from), fmt.Sprintf("Re: report %d", m.id), 0,
			database.TimeArg(l.d, at), database.TimeArg(l.d, at.Add(-time.Minute)), database.TimeArg(l.d, at.Add(-time.Minute)),
			database.TimeArg(l.d, at.Add(3650*24*time.Hour)),
			deleted, 2000 + m.id%200000, m.attachments, fmt.Sprintf("<%d@bench.example>", m.id), "", "",
			fmt.Sprintf("%064x", m.id), fmt.Sprintf("%064x", m.id+1000000000), "bench", erasedBy}
	})
	if err != nil {
		return fmt.Errorf("subject metadata: %w", err)
	}
	type row struct {
		id int64
		r  rcptRow
	}
	var rows []row
	for _, m := range w.subject {
		for _, r := range m.rcpts {
			rows = append(rows, row{m.id, r})
		}
	}
	return l.insertRows(ctx, `INSERT INTO rcpt (id, "to", todomain, kind) VALUES `, 4, len(rows), func(i int) []any {
		return []any{rows[i].id, rows[i].r.to, domainOf(rows[i].r.to), rows[i].r.kind}
	})
}

// holdRows writes the legal holds (created a year ago; released ones a month later).
func (l *loader) holdRows(ctx context.Context) error {
	created := time.Now().AddDate(-1, 0, 0)
	return l.insertRows(ctx, `INSERT INTO legal_holds (id, tenant_id, type, value, reason, matter, status, created_by, created_at, released_by, released_at) VALUES `,
		11, len(l.w.holds), func(i int) []any {
			h := l.w.holds[i]
			var by, at any
			if h.status == "released" {
				by, at = "legal@corp.example.com", database.TimeArg(l.d, created.AddDate(0, 1, 0))
			}
			return []any{h.id, benchTenant, h.typ, h.value, "litigation", "matter " + h.id, h.status, "legal@corp.example.com", database.TimeArg(l.d, created), by, at}
		})
}

// addHold writes one more hold (the blocking hold of the blocked case).
func addHold(ctx context.Context, db *database.DB, h holdRow) error {
	_, err := db.ExecContext(ctx, db.Rebind(`INSERT INTO legal_holds (id, tenant_id, type, value, reason, matter, status, created_by, created_at) VALUES (?, ?, ?, ?, 'litigation', 'matter', ?, 'legal@corp.example.com', ?)`),
		h.id, benchTenant, h.typ, h.value, h.status, database.TimeArg(db.Dialect, time.Now()))
	return err
}

// finish drops the pool table and leaves the database as a service would find it: on
// PostgreSQL with fresh statistics (autovacuum would have analysed the tables after such
// a load), on SQLite without (the service never runs ANALYZE) and checkpointed.
func (l *loader) finish(ctx context.Context) error {
	if err := l.exec(ctx, `DROP TABLE bench_addr`); err != nil {
		return err
	}
	if l.d == database.Postgres {
		if err := l.exec(ctx, `SELECT setval('metadata_id_seq', (SELECT MAX(id) FROM metadata))`); err != nil {
			return err
		}
		return l.exec(ctx, `VACUUM ANALYZE`)
	}
	return l.exec(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
}
