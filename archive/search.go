package archive

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// searchIndex is the full-text index of one dialect. Every dialect stores exactly the terms
// the analyzer made of a message (Parsed.Terms: words and adjacent pairs, analyzer.TermSet)
// and matches exactly the terms and prefixes of an analyzer.Query, so the three give the
// same answers (docs/architecture.md, "Search"): SQLite FTS5 as a term store (sqliteIndex),
// PostgreSQL a tsvector of the words with their positions, a pair found as two adjacent
// words, with a GIN index (pgIndex, search_postgres.go), MySQL a B-tree of (tenant, term,
// id) rows (mysqlIndex).
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
	id      int64
	datekey int64
	tenant  string
	terms   []string
	// positioned is terms as words with positions and the pairs they leave uncovered
	// (analyzer.TermSet.Positioned), what PostgreSQL stores.
	positioned analyzer.Positioned
}

// indexEntryOf is the entry of message id of tenant with date key key, parsed as msg.
func indexEntryOf(id, key int64, tenant string, msg *Parsed) indexEntry {
	return indexEntry{id: id, datekey: key, tenant: tenant, terms: msg.Terms, positioned: msg.Positioned}
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

// writeFTSTerm writes ftsTerm(t) to b without making the string.
func writeFTSTerm(b *strings.Builder, t string) {
	for {
		before, after, found := strings.Cut(t, analyzer.PairSeparator)
		b.WriteString(before)
		if !found {
			return
		}
		b.WriteString(ftsPairJoin)
		t = after
	}
}

// add inserts one row per message, rowid = metadata.id, its terms and its day blocks
// (dayblocks.go). (Keyed by the date key instead, the index gave pages in date order
// without a sort, but doubled in size: a posting list stores the gaps between rowids, and
// the keys of a word's messages lie far apart where ids lie close; docs/performance.md,
// "The date key in FTS5".)
func (sqliteIndex) add(ctx context.Context, tx *database.Tx, entries []indexEntry) error {
	return insertIndexRows(ctx, tx, `INSERT INTO message_search (rowid, terms) VALUES `, `(?, ?)`, entries,
		func(e indexEntry) []any {
			var b strings.Builder
			b.Grow(termBytes(e.terms) + dayBlockLevels*12)
			for _, t := range e.terms {
				writeFTSTerm(&b, t)
				b.WriteByte(' ')
			}
			for i, t := range appendDayBlockTerms(make([]string, 0, dayBlockLevels), e.datekey) {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(t)
			}
			return []any{e.id, b.String()}
		})
}

// dayBlocksReady: SQLite's index holds day blocks once every message has them.
func (sqliteIndex) dayBlocksReady(ctx context.Context, r queryer) (bool, error) {
	return dayBlocksReady(ctx, r)
}

// blockFrom: as driveFrom, the FTS5 hits first.
func (sqliteIndex) blockFrom() (from, cond string) {
	return `message_search CROSS JOIN metadata m ON m.id = message_search.rowid`, `message_search MATCH ?`
}

func (sqliteIndex) blockQuery(text analyzer.Query, terms ...string) string {
	return ftsQuery(text) + ` AND ("` + strings.Join(terms, `" OR "`) + `")`
}

// blockHits counts a block's hits in the FTS5 index alone (posting lists only).
func (sqliteIndex) blockHits(ctx context.Context, r queryer, blockQuery string, max int) (int, error) {
	return countHits(ctx, r, database.SQLite, `SELECT rowid FROM message_search WHERE message_search MATCH ?`, []any{blockQuery}, max)
}

func (sqliteIndex) blockMatch() string {
	return `m.id IN (SELECT rowid FROM message_search WHERE message_search MATCH ?)`
}

// countsPerBlock: no, SQLite counts a walk in one statement (docs/performance.md, "Day
// blocks").
func (sqliteIndex) countsPerBlock() bool { return false }

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

// walksAddresses: SQLite's address_role_addr_date and address_role_domain_date give an
// address's messages newest first.
func (sqliteIndex) walksAddresses() bool { return true }

// pagePrefix: SQLite needs no hint for the page.
func (sqliteIndex) pagePrefix(context.Context, *database.DB, analyzer.Query) string { return "" }

// hits counts the FTS5 index's hits for text (every tenant's): posting lists only.
func (x sqliteIndex) hits(ctx context.Context, r queryer, d database.Dialect, _ string, text analyzer.Query, max int) (int, error) {
	return countHits(ctx, r, d, `SELECT rowid FROM message_search WHERE message_search MATCH ?`, []any{ftsQuery(text)}, max)
}

// driveCap: at a million messages each hit costs a lookup of about 5 µs and its share of
// the sort (2026-11-26: 18,000 hits of two words, 106 ms p50): 10,000 keeps the page near
// 50 ms; past it the day blocks are walked (dayblocks.go).
func (sqliteIndex) driveCap() int { return sqliteDriveCap }

// sqliteDriveCap is driveCap's value, a variable for the tests of the block walk.
var sqliteDriveCap = 10000

// countHits counts the rows of query, up to max+1.
func countHits(ctx context.Context, r queryer, d database.Dialect, query string, args []any, max int) (int, error) {
	var n int
	err := r.QueryRowContext(ctx, database.Rebind(d, `SELECT COUNT(*) FROM (`+query+` LIMIT ?) hits`), append(args, max+1)...).Scan(&n)
	return n, err
}

// removeChunk bounds the ids of one index DELETE.
const removeChunk = 500

// removeIDs runs prefix + "(?, ?, …)" + suffix (at most one string) for ids, removeChunk
// at a time.
func removeIDs(ctx context.Context, tx *database.Tx, prefix string, ids []int64, suffix ...string) error {
	for start := 0; start < len(ids); start += removeChunk {
		chunk := ids[start:min(start+removeChunk, len(ids))]
		if _, err := tx.Exec(ctx, prefix+"("+database.InList(len(chunk))+")"+strings.Join(suffix, ""), int64Args(chunk)...); err != nil {
			return err
		}
	}
	return nil
}
