package archive

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// pgIndex stores one tsvector a message under a GIN index: each word of the message with
// the positions it keeps, and as lexemes of their own only the pairs those positions do
// not cover (analyzer.TermSet.Positioned: an occurrence past position 16,381 or past a
// word's 256th). A pair "a b" of a query is ('a' <-> 'b' | 'a b'): a at some position and
// b at the next, or the pair's lexeme, which is exactly "the message's terms hold the
// pair", as on SQLite and MySQL. The GIN index then holds the words only (tens of
// thousands of keys with long posting lists) instead of millions of pairs with short ones,
// which made the import slow down as the archive grew (docs/performance.md, "PostgreSQL:
// positions instead of pairs").
//
// Documents written before (array_to_tsvector of the terms: every pair a lexeme, no
// positions) answer the same queries the same way: a lexeme without positions never
// matches <-> (PostgreSQL 9.6 and later), so their pairs are found by their lexemes.
// `mailledger reindex` rewrites them in the smaller form (docs/operations.md).
type pgIndex struct{}

// add stores one tsvector a message, written as a tsvector literal (no parser, no
// dictionary: each lexeme exactly as given), with its day blocks (dayblocks.go) as
// lexemes without positions.
func (pgIndex) add(ctx context.Context, tx *database.Tx, entries []indexEntry) error {
	return insertIndexRows(ctx, tx, `INSERT INTO message_search (id, document) VALUES `,
		`(?, ?::tsvector)`, entries, func(e indexEntry) []any {
			var b strings.Builder
			b.WriteString(PostgresDocument(e.positioned))
			for _, t := range appendDayBlockTerms(make([]string, 0, dayBlockLevels), e.datekey) {
				b.WriteString(tsLexeme(t))
				b.WriteByte(' ')
			}
			return []any{e.id, b.String()}
		})
}

func (pgIndex) remove(ctx context.Context, tx *database.Tx, ids []int64) error {
	return removeIDs(ctx, tx, `DELETE FROM message_search WHERE id IN `, ids)
}

// tsEscaper doubles the backslashes and quotes of a lexeme.
var tsEscaper = strings.NewReplacer(`\`, `\\`, `'`, `''`)

// tsLexeme quotes a lexeme for a tsvector or tsquery literal.
func tsLexeme(t string) string { return `'` + tsEscaper.Replace(t) + `'` }

// PostgresDocument is the tsvector literal PostgreSQL's index stores for p: each word with
// its positions, then the pairs the positions leave uncovered ('word':1,7 … 'a b' …).
// bench/indexlayout builds its documents with it.
func PostgresDocument(p analyzer.Positioned) string {
	var b strings.Builder
	for _, w := range p.Words {
		b.WriteString(tsLexeme(w.Word))
		sep := byte(':')
		for _, pos := range w.Positions {
			b.WriteByte(sep)
			b.WriteString(strconv.Itoa(int(pos)))
			sep = ','
		}
		b.WriteByte(' ')
	}
	for _, pair := range p.Pairs {
		b.WriteString(tsLexeme(pair))
		b.WriteByte(' ')
	}
	return b.String()
}

// tsQuery is q as a tsquery literal: quoted lexemes taken as they are, a pair its words
// next to each other or its lexeme, prefixes with :*, all required.
func tsQuery(q analyzer.Query) string {
	parts := make([]string, 0, len(q.Terms)+len(q.Prefixes))
	for _, t := range q.Terms {
		if a, b, isPair := strings.Cut(t, analyzer.PairSeparator); isPair {
			parts = append(parts, "("+tsLexeme(a)+" <-> "+tsLexeme(b)+" | "+tsLexeme(t)+")")
			continue
		}
		parts = append(parts, tsLexeme(t))
	}
	for _, p := range q.Prefixes {
		parts = append(parts, tsLexeme(p)+`:*`)
	}
	return strings.Join(parts, " & ")
}

func (pgIndex) match(q analyzer.Query) (string, []any) {
	return `m.id IN (SELECT id FROM message_search WHERE document @@ ?::tsquery)`, []any{tsQuery(q)}
}

// hits counts the GIN index's hits for text (every tenant's), up to max+1 rows.
func (pgIndex) hits(ctx context.Context, r queryer, d database.Dialect, _ string, text analyzer.Query, max int) (int, error) {
	return countHits(ctx, r, d, `SELECT id FROM message_search WHERE document @@ ?::tsquery`, []any{tsQuery(text)}, max)
}

// listHits lists the GIN index's hits for text (every tenant's), at most max+1 ids.
func (pgIndex) listHits(ctx context.Context, r queryer, text analyzer.Query, max int) ([]int64, error) {
	rows, err := r.QueryContext(ctx, `SELECT id FROM message_search WHERE document @@ $1::tsquery LIMIT $2`, tsQuery(text), max+1)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}

// listFrom: the listed ids as an array, each looked up in metadata by primary key.
func (pgIndex) listFrom(ids []int64) (from string, args []any) {
	return `unnest(?::bigint[]) h(id) CROSS JOIN LATERAL (SELECT * FROM metadata WHERE id = h.id) m`, []any{ids}
}

// estimateHits is the planner's estimate of the text's hits (EXPLAIN, no execution): from
// the column's statistics of its most common lexemes, close for a common word. Counting
// instead reads a word's whole posting list into a bitmap first: 60 to 85 ms for a word in
// every message of a million (docs/performance.md, "PostgreSQL, 1,000,000 messages, with day blocks").
func (pgIndex) estimateHits(ctx context.Context, r queryer, text analyzer.Query) (int, error) {
	var plan string
	if err := r.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) SELECT id FROM message_search WHERE document @@ $1::tsquery`, tsQuery(text)).Scan(&plan); err != nil {
		return 0, fmt.Errorf("estimate hits: %w", err)
	}
	var out []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		}
	}
	if err := json.Unmarshal([]byte(plan), &out); err != nil || len(out) != 1 {
		return 0, fmt.Errorf("estimate hits: unexpected plan %.200q", plan)
	}
	return int(min(out[0].Plan.Rows, 1<<40)), nil
}

// driveCap: each hit is a heap row of message_search to read and a metadata row to look
// up, a few microseconds each.
func (pgIndex) driveCap() int { return pgDriveCap }

// pgDriveCap is driveCap's value, a variable for the tests of the block walk.
var pgDriveCap = 10000

// sortCap: past it, a text's page is read by the day-block walk, though its hits were
// listed (docs/performance.md, "PostgreSQL: many hits walked, not sorted").
func (pgIndex) sortCap() int { return pgSortCap }

// pgSortCap is sortCap's value, a variable for the tests of the block walk.
var pgSortCap = 2000

// driveFrom reads the hits first and looks each one up in metadata by primary key
// (LATERAL: a nested loop, whatever the planner guesses of a word's frequency: it
// guesses 0.5 % for any word it has no statistics of, and then walks the date index
// testing every message).
func (pgIndex) driveFrom(q analyzer.Query) (from, cond string, args []any, ok bool) {
	return `(SELECT id FROM message_search WHERE document @@ ?::tsquery OFFSET 0) h CROSS JOIN LATERAL (SELECT * FROM metadata WHERE id = h.id) m`,
		`1 = 1`, []any{tsQuery(q)}, true
}

// dayBlocksReady: the index holds day blocks once every message has them.
func (pgIndex) dayBlocksReady(ctx context.Context, r queryer) (bool, error) {
	return dayBlocksReady(ctx, r)
}

// blockFrom: as driveFrom, the GIN hits first, each looked up by primary key.
func (pgIndex) blockFrom() (from, cond string) {
	from, cond, _, _ = pgIndex{}.driveFrom(analyzer.Query{})
	return from, cond
}

// narrowBlockPage: a block's page sorts its hits' ids and date keys, found in the
// index of metadata by tenant and date key (migration 00032 has it carry the id), and
// looks up only the page's rows; sorting every hit's whole row read the table's heap
// for each (docs/performance.md, "PostgreSQL: a block's page sorted by id and date key").
func (pgIndex) narrowBlockPage() bool { return true }

func (pgIndex) blockQuery(text analyzer.Query, terms ...string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = tsLexeme(t)
	}
	return tsQuery(text) + " & (" + strings.Join(quoted, " | ") + ")"
}

// blockHits counts a block's hits in the GIN index alone: the heap pages of message_search
// are read for visibility only, no message is looked up (8 µs a hit with the lookup at a
// million messages, 2 without).
func (pgIndex) blockHits(ctx context.Context, r queryer, blockQuery string, max int) (int, error) {
	return countHits(ctx, r, database.Postgres, `SELECT 1 FROM message_search WHERE document @@ ?::tsquery`, []any{blockQuery}, max)
}

func (pgIndex) blockMatch() string {
	return `m.id IN (SELECT id FROM message_search WHERE document @@ ?::tsquery)`
}

// countsPerBlock: yes. PostgreSQL runs the one statement as a hash join that reads every
// message of the range, however few have the words (docs/performance.md, "PostgreSQL, 1,000,000 messages, with day blocks").
func (pgIndex) countsPerBlock() bool { return true }

// pagePrefix: PostgreSQL takes no hint.
func (pgIndex) pagePrefix(context.Context, *database.DB, analyzer.Query) string { return "" }

// walksAddresses: address_role_addr_date and address_role_domain_date (migration 00025)
// give an address's messages newest first, as on SQLite; since migration 00028 they carry
// the message id (and the domain's the address), and metadata_visible what a count tests
// of a message, so a walk and its count read no table row (index-only scans).
func (pgIndex) walksAddresses() bool { return true }
