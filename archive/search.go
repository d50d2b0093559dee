package archive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mailledger/mailledger/database"
)

// maxIndexedBody bounds the body text put into the full-text index.
const maxIndexedBody = 256 << 10

// searchIndex is the full-text index of one dialect: SQLite FTS5 (contentless, so the
// index keeps tokens, not text), PostgreSQL tsvector with a GIN index, MySQL a table of
// terms (mysqlIndex).
// Subject, sender, recipients, body text and attachment names are indexed.
type searchIndex interface {
	// add indexes the new messages of one commit, a few statements for the lot.
	add(ctx context.Context, tx *database.Tx, entries []indexEntry) error
	// remove takes messages out of the index, one statement per removeChunk ids.
	remove(ctx context.Context, tx *database.Tx, ids []int64) error
	// match returns a SQL condition on metadata.id (aliased m) and its arguments for the
	// words of q.
	match(words []string) (string, []any)
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
	msg    *Parsed
}

// indexChunk and indexChunkBytes bound one multi-row index INSERT: at most indexChunk rows
// and, past the first row, about indexChunkBytes of text (bodies are up to maxIndexedBody
// each; MySQL's default max_allowed_packet is 16 MiB).
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
		a := argsOf(e)
		n := textSize(a)
		if rows > 0 && (rows == indexChunk || size+n > indexChunkBytes) {
			if err := flush(); err != nil {
				return err
			}
		}
		args, rows, size = append(args, a...), rows+1, size+n
	}
	return flush()
}

func textSize(args []any) int {
	n := 0
	for _, a := range args {
		if s, ok := a.(string); ok {
			n += len(s)
		}
	}
	return n
}

type indexDoc struct {
	subject, sender, recipients, body, attachments string
}

func docOf(m *Parsed) indexDoc {
	var names []string
	for _, a := range m.Attachments {
		names = append(names, a.Name)
	}
	rcpts := append(append(append(append([]string{}, m.To...), m.Cc...), m.Bcc...), m.Envelope...)
	return indexDoc{
		subject: cleanText(m.Subject), sender: m.From, recipients: strings.Join(rcpts, " "),
		body: cleanText(clip(m.Text, maxIndexedBody)), attachments: cleanText(strings.Join(names, " ")),
	}
}

func (d indexDoc) all() string {
	return strings.Join([]string{d.subject, d.sender, d.recipients, d.body, d.attachments}, "\n")
}

// cleanText makes s storable in every dialect: valid UTF-8 without NUL bytes.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}

// searchWords splits a user query into words of letters and digits (and the address
// characters @ . _ -, kept inside a word), dropping everything that is query syntax in
// one of the engines.
func searchWords(q string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("@._-", r))
	}) {
		f = strings.Trim(f, "@._-")
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

type sqliteIndex struct{}

func (sqliteIndex) add(ctx context.Context, tx *database.Tx, entries []indexEntry) error {
	return insertIndexRows(ctx, tx, `INSERT INTO message_search (rowid, tenant_id, subject, sender, recipients, body, attachments) VALUES `,
		`(`+database.InList(7)+`)`, entries, func(e indexEntry) []any {
			d := docOf(e.msg)
			return []any{e.id, e.tenant, d.subject, d.sender, d.recipients, d.body, d.attachments}
		})
}

func (sqliteIndex) remove(ctx context.Context, tx *database.Tx, ids []int64) error {
	return removeIDs(ctx, tx, `DELETE FROM message_search WHERE rowid IN `, ids)
}

func (sqliteIndex) match(words []string) (string, []any) {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	return `m.id IN (SELECT rowid FROM message_search WHERE message_search MATCH ?)`, []any{strings.Join(quoted, " AND ")}
}

// driveFrom makes the count of a text search read the FTS5 index first and look each
// match up by primary key: SQLite otherwise walks the tenant's messages newest first and
// tests each against the match list, which for a word in a third of 100,000 messages took
// 90 ms to count 10,001 of them against 25 ms this way. CROSS JOIN keeps SQLite to that
// order.
func (x sqliteIndex) driveFrom(words []string) (from, cond string, args []any, ok bool) {
	_, matchArgs := x.match(words)
	return `message_search CROSS JOIN metadata m ON m.id = message_search.rowid`, `message_search MATCH ?`, matchArgs, true
}

// pagePrefix: SQLite needs no hint for the page.
func (sqliteIndex) pagePrefix(context.Context, *database.DB, []string) string { return "" }

type pgIndex struct{}

// add stores one tsvector a message, of all its indexed text, stripped of positions and
// weights: search matches words (plainto_tsquery, ordered by date, never ranked), so
// positions would only make every row, its WAL and its TOAST several times larger.
func (pgIndex) add(ctx context.Context, tx *database.Tx, entries []indexEntry) error {
	return insertIndexRows(ctx, tx, `INSERT INTO message_search (id, tenant_id, document) VALUES `,
		`(?, ?, strip(to_tsvector('simple', ?)))`, entries, func(e indexEntry) []any {
			return []any{e.id, e.tenant, docOf(e.msg).all()}
		})
}

func (pgIndex) remove(ctx context.Context, tx *database.Tx, ids []int64) error {
	return removeIDs(ctx, tx, `DELETE FROM message_search WHERE id IN `, ids)
}

func (pgIndex) match(words []string) (string, []any) {
	return `m.id IN (SELECT id FROM message_search WHERE document @@ plainto_tsquery('simple', ?))`, []any{strings.Join(words, " ")}
}

// mysqlIndex is an inverted index in a B-tree: search_term holds one (tenant, term, id) row
// per distinct term of a message (see indexTerms), and a word is a range of the primary
// key. InnoDB FULLTEXT, its predecessor, took about a second to match a word that most
// messages hold. It also helps MariaDB's optimizer plan Search (see searchPlanner).
type mysqlIndex struct {
	mu           sync.Mutex
	hasLimitHint *bool // nil until the server was asked
}

// Terms of the MySQL index: shorter terms are not indexed (nor looked for), longer ones are
// cut to maxTermRunes, the width of search_term.term.
const (
	minTermRunes = 2
	maxTermRunes = 64
)

// indexTerms returns the distinct terms of s, in order of first appearance: the lower-case
// runs of letters and digits (with their combining marks), each cut to maxTermRunes runes,
// those shorter than minTermRunes left out. Documents and query words go through it alike,
// so "alice@example.com" is alice, example and com on both sides.
func indexTerms(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	}) {
		if n := utf8.RuneCountInString(f); n < minTermRunes {
			continue
		} else if n > maxTermRunes {
			f = string([]rune(f)[:maxTermRunes])
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
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
		for _, t := range indexTerms(docOf(e.msg).all()) {
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

// match requires every term of the words, each a lookup of (tenant, term, m.id) or a range
// of (tenant, term), whichever the optimizer picks. Words shorter than minTermRunes are
// dropped, as the index never holds them: a query of such words only has no text condition.
func (x *mysqlIndex) match(words []string) (string, []any) {
	terms := indexTerms(strings.Join(words, " "))
	if len(terms) == 0 {
		return `1 = 1`, nil
	}
	return x.termConds(terms)
}

func (*mysqlIndex) termConds(terms []string) (string, []any) {
	conds := make([]string, len(terms))
	args := make([]any, len(terms))
	for i, t := range terms {
		conds[i] = `m.id IN (SELECT id FROM search_term WHERE tenant_id = m.tenant_id AND term = ?)`
		args[i] = t
	}
	return strings.Join(conds, " AND "), args
}

// driveFrom makes the count of a text search read search_term first: MariaDB's join
// optimizer, blind to the count's LIMIT and misled by the estimate of a tenant's messages
// (half the table), otherwise walks the messages and looks each one up, five times slower
// for a word in a third of them. The first term drives; the optimizer may still put a
// rarer one before it.
func (x *mysqlIndex) driveFrom(words []string) (from, cond string, args []any, ok bool) {
	terms := indexTerms(strings.Join(words, " "))
	if len(terms) == 0 {
		return "", "", nil, false
	}
	cond, args = `t.term = ?`, []any{terms[0]}
	if len(terms) > 1 {
		rest, restArgs := x.termConds(terms[1:])
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
func (x *mysqlIndex) pagePrefix(ctx context.Context, db *database.DB, words []string) string {
	if !x.limitHint(ctx, db) {
		return ""
	}
	k := len(indexTerms(strings.Join(words, " ")))
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
