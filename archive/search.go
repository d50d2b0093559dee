package archive

import (
	"context"
	"strings"
	"unicode"

	"github.com/mailledger/mailledger/database"
)

// maxIndexedBody bounds the body text put into the full-text index.
const maxIndexedBody = 256 << 10

// searchIndex is the full-text index of one dialect: SQLite FTS5 (contentless, so the
// index keeps tokens, not text), PostgreSQL tsvector with a GIN index, MySQL FULLTEXT.
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
		return mysqlIndex{}
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

type pgIndex struct{}

func (pgIndex) add(ctx context.Context, tx *database.Tx, entries []indexEntry) error {
	return insertIndexRows(ctx, tx, `INSERT INTO message_search (id, tenant_id, document) VALUES `,
		`(?, ?, setweight(to_tsvector('simple', ?), 'A') || setweight(to_tsvector('simple', ?), 'B') || `+
			`setweight(to_tsvector('simple', ?), 'C') || to_tsvector('simple', ?))`, entries, func(e indexEntry) []any {
			d := docOf(e.msg)
			return []any{e.id, e.tenant, d.subject, d.sender + " " + d.recipients, d.attachments, d.body}
		})
}

func (pgIndex) remove(ctx context.Context, tx *database.Tx, ids []int64) error {
	return removeIDs(ctx, tx, `DELETE FROM message_search WHERE id IN `, ids)
}

func (pgIndex) match(words []string) (string, []any) {
	return `m.id IN (SELECT id FROM message_search WHERE document @@ plainto_tsquery('simple', ?))`, []any{strings.Join(words, " ")}
}

type mysqlIndex struct{}

func (mysqlIndex) add(ctx context.Context, tx *database.Tx, entries []indexEntry) error {
	return insertIndexRows(ctx, tx, `INSERT INTO message_search (id, tenant_id, document) VALUES `, `(?, ?, ?)`, entries,
		func(e indexEntry) []any { return []any{e.id, e.tenant, docOf(e.msg).all()} })
}

func (mysqlIndex) remove(ctx context.Context, tx *database.Tx, ids []int64) error {
	return removeIDs(ctx, tx, `DELETE FROM message_search WHERE id IN `, ids)
}

// match drops words shorter than InnoDB's default innodb_ft_min_token_size (3), which the
// index never holds.
func (mysqlIndex) match(words []string) (string, []any) {
	var terms []string
	for _, w := range words {
		if len([]rune(w)) >= 3 {
			terms = append(terms, `+"`+w+`"`)
		}
	}
	if len(terms) == 0 {
		return `1 = 1`, nil
	}
	return `m.id IN (SELECT id FROM message_search WHERE MATCH(document) AGAINST (? IN BOOLEAN MODE))`, []any{strings.Join(terms, " ")}
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
