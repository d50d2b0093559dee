package archive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// searchIndex is the full-text index of one dialect. Every dialect stores exactly the terms
// the analyzer made of a message (Parsed.Terms: words and adjacent pairs, analyzer.TermSet)
// and matches exactly the terms and prefixes of an analyzer.Query, so the three give the
// same answers (docs/architecture.md, "Search"): SQLite FTS5 as a term store (sqliteIndex),
// PostgreSQL a tsvector of the terms with a GIN index (pgIndex), MySQL a B-tree of (tenant,
// term, id) rows (mysqlIndex).
type searchIndex interface {
	// add indexes the new messages of one commit, a few statements for the lot.
	add(ctx context.Context, tx *database.Tx, entries []indexEntry) error
	// remove takes messages out of the index, one statement per removeChunk ids.
	remove(ctx context.Context, tx *database.Tx, ids []int64) error
	// match returns a SQL condition on metadata.id (aliased m) and its arguments for a
	// query that is not empty.
	match(q analyzer.Query) (string, []any)
}

func newSearchIndex(d database.Dialect) searchIndex {
	switch d {
	case database.Postgres:
		return pgIndex{}
	case database.MySQL:
		return &mysqlIndex{}
	}
	return sqliteIndex{}
}

// indexEntry is one message to index.
type indexEntry struct {
	id     int64
	tenant string
	terms  []string
}

// indexChunk and indexChunkBytes bound one multi-row index INSERT: at most indexChunk rows
// and, past the first row, about indexChunkBytes of terms (a message holds at most
// maxTermBytes; MySQL's default max_allowed_packet is 16 MiB).
const (
	indexChunk      = 100
	indexChunkBytes = 4 << 20
)

// insertIndexRows inserts one row per entry with prefix + row template, in statements
// bounded by indexChunk and indexChunkBytes; argsOf gives the row's arguments.
func insertIndexRows(ctx context.Context, tx *database.Tx, prefix, row string, entries []indexEntry, argsOf func(indexEntry) []any) error {
	var args []any
	rows, size := 0, 0
	flush := func() error {
		if rows == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, prefix+database.Rows(rows, row), args...)
		args, rows, size = args[:0], 0, 0
		return err
	}
	for _, e := range entries {
		n := termBytes(e.terms)
		if rows > 0 && (rows == indexChunk || size+n > indexChunkBytes) {
			if err := flush(); err != nil {
				return err
			}
		}
		args, rows, size = append(args, argsOf(e)...), rows+1, size+n
	}
	return flush()
}

func termBytes(terms []string) int {
	n := 0
	for _, t := range terms {
		n += len(t) + 1
	}
	return n
}

// queryOf reads the text of a search query by the analyzer's rules.
func queryOf(text string) (analyzer.Query, error) {
	q, err := analyzer.ParseQuery(text)
	if err != nil {
		return q, fmt.Errorf("%w: %w", ErrBadQuery, err)
	}
	return q, nil
}

// ErrBadQuery means a search query the analyzer refuses (analyzer.ErrQueryTooLong).
var ErrBadQuery = errors.New("bad search query")

type sqliteIndex struct{}

// ftsPairJoin stands for analyzer.PairSeparator in the FTS5 index: a token character of
// its ascii tokenizer (tokenchars '_') that no word holds.
const ftsPairJoin = "_"

// ftsTerm is a term as the FTS5 index stores it.
func ftsTerm(t string) string { return strings.ReplaceAll(t, analyzer.PairSeparator, ftsPairJoin) }

func (sqliteIndex) add(ctx context.Context, tx *database.Tx, entries []indexEntry) error {
	return insertIndexRows(ctx, tx, `INSERT INTO message_search (rowid, terms) VALUES `, `(?, ?)`, entries,
		func(e indexEntry) []any {
			var b strings.Builder
			b.Grow(termBytes(e.terms))
			for i, t := range e.terms {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(ftsTerm(t))
			}
			return []any{e.id, b.String()}
		})
}

func (sqliteIndex) remove(ctx context.Context, tx *database.Tx, ids []int64) error {
	return removeIDs(ctx, tx, `DELETE FROM message_search WHERE rowid IN `, ids)
}

// ftsQuery is q as an FTS5 query: every term a string, every prefix a string with *,
// all required. Terms and prefixes hold no double quote (analyzer words are letters,
// marks and numbers).
func ftsQuery(q analyzer.Query) string {
	parts := make([]string, 0, len(q.Terms)+len(q.Prefixes))
	for _, t := range q.Terms {
		parts = append(parts, `"`+ftsTerm(t)+`"`)
	}
	for _, p := range q.Prefixes {
		parts = append(parts, `"`+p+`"*`)
	}
	return strings.Join(parts, " AND ")
}

func (sqliteIndex) match(q analyzer.Query) (string, []any) {
	return `m.id IN (SELECT rowid FROM message_search WHERE message_search MATCH ?)`, []any{ftsQuery(q)}
}

// driveFrom makes the count of a text search read the FTS5 index first and look each
// match up by primary key: SQLite otherwise walks the tenant's messages newest first and
// tests each against the match list, which for a word in a third of 100,000 messages took
// 90 ms to count 10,001 of them against 25 ms this way. CROSS JOIN keeps SQLite to that
// order.
func (sqliteIndex) driveFrom(q analyzer.Query) (from, cond string, args []any, ok bool) {
	return `message_search CROSS JOIN metadata m ON m.id = message_search.rowid`, `message_search MATCH ?`, []any{ftsQuery(q)}, true
}

// pagePrefix: SQLite needs no hint for the page.
func (sqliteIndex) pagePrefix(context.Context, *database.DB, analyzer.Query) string { return "" }

// hits counts the FTS5 index's hits for text (every tenant's): posting lists only.
func (x sqliteIndex) hits(ctx context.Context, db *database.DB, _ string, text analyzer.Query, max int) (int, error) {
	return countHits(ctx, db, `SELECT rowid FROM message_search WHERE message_search MATCH ?`, []any{ftsQuery(text)}, max)
}

// driveCap: at a million messages each hit costs a lookup of about 5 µs and its share of
// the sort (2026-11-26: 18,000 hits of two words, 106 ms p50): 10,000 keeps the page near
// 50 ms, and past it the date walk meets a match every few rows.
func (sqliteIndex) driveCap() int { return 10000 }

// countHits counts the rows of query, up to max+1.
func countHits(ctx context.Context, db *database.DB, query string, args []any, max int) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, db.Rebind(`SELECT COUNT(*) FROM (`+query+` LIMIT ?) hits`), append(args, max+1)...).Scan(&n)
	return n, err
}

type pgIndex struct{}

// add stores one tsvector a message: array_to_tsvector keeps each term as one lexeme,
// exactly, without positions (search matches terms, ordered by date, never ranked).
func (pgIndex) add(ctx context.Context, tx *database.Tx, entries []indexEntry) error {
	return insertIndexRows(ctx, tx, `INSERT INTO message_search (id, document) VALUES `,
		`(?, array_to_tsvector(?::text[]))`, entries, func(e indexEntry) []any {
			terms := e.terms
			if terms == nil {
				terms = []string{}
			}
			return []any{e.id, terms}
		})
}

func (pgIndex) remove(ctx context.Context, tx *database.Tx, ids []int64) error {
	return removeIDs(ctx, tx, `DELETE FROM message_search WHERE id IN `, ids)
}

// tsQuery is q as a tsquery literal: quoted lexemes taken as they are (no parser, no
// dictionary), prefixes with :*, all required.
func tsQuery(q analyzer.Query) string {
	quote := func(t string) string {
		return `'` + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(t) + `'`
	}
	parts := make([]string, 0, len(q.Terms)+len(q.Prefixes))
	for _, t := range q.Terms {
		parts = append(parts, quote(t))
	}
	for _, p := range q.Prefixes {
		parts = append(parts, quote(p)+`:*`)
	}
	return strings.Join(parts, " & ")
}

func (pgIndex) match(q analyzer.Query) (string, []any) {
	return `m.id IN (SELECT id FROM message_search WHERE document @@ ?::tsquery)`, []any{tsQuery(q)}
}

// hits counts the GIN index's hits for text (every tenant's), up to max+1 rows.
func (pgIndex) hits(ctx context.Context, db *database.DB, _ string, text analyzer.Query, max int) (int, error) {
	return countHits(ctx, db, `SELECT id FROM message_search WHERE document @@ ?::tsquery`, []any{tsQuery(text)}, max)
}

// driveCap: each hit is a heap row of message_search to read and a metadata row to look
// up, a few microseconds each.
func (pgIndex) driveCap() int { return 10000 }

// driveFrom reads the hits first and looks each one up in metadata by primary key
// (LATERAL: a nested loop, whatever the planner guesses of a word's frequency: it
// guesses 0.5 % for any word it has no statistics of, and then walks the date index
// testing every message).
func (pgIndex) driveFrom(q analyzer.Query) (from, cond string, args []any, ok bool) {
	return `(SELECT id FROM message_search WHERE document @@ ?::tsquery OFFSET 0) h CROSS JOIN LATERAL (SELECT * FROM metadata WHERE id = h.id) m`,
		`1 = 1`, []any{tsQuery(q)}, true
}

// pagePrefix: PostgreSQL takes no hint.
func (pgIndex) pagePrefix(context.Context, *database.DB, analyzer.Query) string { return "" }

// mysqlIndex is an inverted index in a B-tree: search_term holds one (tenant, term, id) row
// per distinct term of a message (see indexTerms), and a word is a range of the primary
// key. InnoDB FULLTEXT, its predecessor, took about a second to match a word that most
// messages hold. It also helps MariaDB's optimizer plan Search (see searchPlanner).
type mysqlIndex struct {
	mu           sync.Mutex
	hasLimitHint *bool // nil until the server was asked
}

// termChunk and termChunkBytes bound one multi-row INSERT into search_term (MariaDB's
// default max_allowed_packet is 16 MiB; a row is at most about 520 bytes).
const (
	termChunk      = 5000
	termChunkBytes = 1 << 20
)

// termRow is one row of search_term.
type termRow struct {
	tenant, term string
	id           int64
}

func (*mysqlIndex) add(ctx context.Context, tx *database.Tx, entries []indexEntry) error {
	var rows []termRow
	for _, e := range entries {
		for _, t := range e.terms {
			rows = append(rows, termRow{e.tenant, t, e.id})
		}
	}
	// In key order, the rows of one term go to one place of the primary key.
	slices.SortFunc(rows, func(a, b termRow) int {
		return cmp.Or(strings.Compare(a.tenant, b.tenant), strings.Compare(a.term, b.term), cmp.Compare(a.id, b.id))
	})
	for len(rows) > 0 {
		n, size := 0, 0
		for n < len(rows) && n < termChunk && (n == 0 || size+len(rows[n].tenant)+len(rows[n].term) <= termChunkBytes) {
			size += len(rows[n].tenant) + len(rows[n].term)
			n++
		}
		args := make([]any, 0, 3*n)
		for _, r := range rows[:n] {
			args = append(args, r.tenant, r.term, r.id)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO search_term (tenant_id, term, id) VALUES `+database.Rows(n, `(?, ?, ?)`), args...); err != nil {
			return fmt.Errorf("index terms: %w", err)
		}
		rows = rows[n:]
	}
	return nil
}

func (*mysqlIndex) remove(ctx context.Context, tx *database.Tx, ids []int64) error {
	return removeIDs(ctx, tx, `DELETE FROM search_term WHERE id IN `, ids)
}

// match requires every term and prefix of q, each a lookup of (tenant, term, m.id) or a
// range of (tenant, term), whichever the optimizer picks.
func (x *mysqlIndex) match(q analyzer.Query) (string, []any) {
	return x.termConds(q.Terms, q.Prefixes)
}

func (*mysqlIndex) termConds(terms, prefixes []string) (string, []any) {
	conds := make([]string, 0, len(terms)+len(prefixes))
	args := make([]any, 0, len(terms)+2*len(prefixes))
	for _, t := range terms {
		conds = append(conds, `m.id IN (SELECT id FROM search_term WHERE tenant_id = m.tenant_id AND term = ?)`)
		args = append(args, t)
	}
	for _, p := range prefixes {
		conds = append(conds, `m.id IN (SELECT id FROM search_term WHERE tenant_id = m.tenant_id AND term >= ? AND term < ?)`)
		args = append(args, p, analyzer.PrefixEnd(p))
	}
	return strings.Join(conds, " AND "), args
}

// hits counts the tenant's messages that hold the first term (the one driveFrom reads), up
// to max+1: a range of the primary key.
func (x *mysqlIndex) hits(ctx context.Context, db *database.DB, tenant string, text analyzer.Query, max int) (int, error) {
	if len(text.Terms) == 0 {
		return max + 1, nil
	}
	return countHits(ctx, db, `SELECT id FROM search_term WHERE tenant_id = ? AND term = ?`, []any{tenant, text.Terms[0]}, max)
}

// driveCap: a range of the primary key and an InnoDB lookup by primary key a hit, several
// times SQLite's cost a row.
func (*mysqlIndex) driveCap() int { return 20000 }

// driveFrom makes the count of a text search read search_term first: MariaDB's join
// optimizer, blind to the count's LIMIT and misled by the estimate of a tenant's messages
// (half the table), otherwise walks the messages and looks each one up, five times slower
// for a word in a third of them. The first term drives (a query of prefixes only is left
// to the optimizer); the optimizer may still put a rarer one before it.
func (x *mysqlIndex) driveFrom(q analyzer.Query) (from, cond string, args []any, ok bool) {
	if len(q.Terms) == 0 {
		return "", "", nil, false
	}
	cond, args = `t.term = ?`, []any{q.Terms[0]}
	if len(q.Terms) > 1 || len(q.Prefixes) > 0 {
		rest, restArgs := x.termConds(q.Terms[1:], q.Prefixes)
		cond, args = cond+` AND `+rest, append(args, restArgs...)
	}
	return `search_term t STRAIGHT_JOIN metadata m ON m.tenant_id = t.tenant_id AND m.id = t.id`, cond, args, true
}

// pagePrefix asks MariaDB (10.6.20, 10.11.10, 11.4.4 and later) to weigh the LIMIT of a
// text search's page when it orders the join: a common word then walks metadata_msgdate
// newest first and stops after a page, a rare one reads its terms and sorts them. The ratio
// is how many times cheaper the walk must look: InnoDB estimates a word's rows about twice
// too high, so with k words the walk looks 2^(k-1) times better than it is. On the
// benchmark archive ratio 1 was best for single words (a word in 5 % of the messages: 8 ms
// against 45 ms without the hint) and 2 for pairs. With a date range the optimizer chooses
// well without it. The server is asked once whether it knows
// optimizer_join_limit_pref_ratio; MySQL and older MariaDB get no hint.
func (x *mysqlIndex) pagePrefix(ctx context.Context, db *database.DB, q analyzer.Query) string {
	if !x.limitHint(ctx, db) {
		return ""
	}
	k := len(q.Terms) + len(q.Prefixes)
	return fmt.Sprintf(`SET STATEMENT optimizer_join_limit_pref_ratio = %d FOR `, 1<<min(max(k-1, 0), 3))
}

// limitHint says whether the server knows optimizer_join_limit_pref_ratio.
func (x *mysqlIndex) limitHint(ctx context.Context, db *database.DB) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.hasLimitHint == nil {
		rows, err := db.QueryContext(ctx, `SHOW VARIABLES LIKE 'optimizer_join_limit_pref_ratio'`)
		if err != nil {
			return false // asked again next time
		}
		known := rows.Next()
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return false
		}
		x.hasLimitHint = &known
	}
	return *x.hasLimitHint
}

// removeChunk bounds the ids of one index DELETE.
const removeChunk = 500

// removeIDs runs prefix + "(?, ?, …)" for ids, removeChunk at a time.
func removeIDs(ctx context.Context, tx *database.Tx, prefix string, ids []int64) error {
	for start := 0; start < len(ids); start += removeChunk {
		chunk := ids[start:min(start+removeChunk, len(ids))]
		if _, err := tx.Exec(ctx, prefix+"("+database.InList(len(chunk))+")", int64Args(chunk)...); err != nil {
			return err
		}
	}
	return nil
}
