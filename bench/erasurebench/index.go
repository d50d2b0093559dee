package main

import (
	"context"
	"fmt"
	"math/rand"
	"strings"

	"github.com/mailledger/mailledger/database"
)

// Shape of the indexed text.
const (
	vocabulary = 3000   // distinct made-up words
	zipfS      = 1.1    // word frequencies follow Zipf's law with this exponent
	textChars  = 400000 // the text that bodies are cut from
	bodyChars  = 400    // one body: about 60 words
)

// bodyText is a long text of made-up words with Zipf frequencies; the body of message i
// is a window of bodyChars characters into it, at an offset that i picks.
func bodyText() string {
	rng := rand.New(rand.NewSource(3))
	words := make([]string, vocabulary)
	for i := range words {
		var b strings.Builder
		for range 2 + rng.Intn(3) {
			b.WriteByte("bdfgklmnprstvz"[rng.Intn(14)])
			b.WriteByte("aeiou"[rng.Intn(5)])
		}
		words[i] = b.String()
	}
	zipf := rand.NewZipf(rng, zipfS, 1, vocabulary-1)
	var b strings.Builder
	for b.Len() < textChars {
		b.WriteString(words[zipf.Uint64()])
		b.WriteByte(' ')
	}
	return b.String()
}

// searchRows fills the full-text index for every visible message in one INSERT …
// SELECT, in the archive's own layout (FTS5 terms on SQLite, a tsvector on PostgreSQL)
// with the words of the subject, sender, recipients, a generated body and attachment
// names. The analyzer would also store the pairs of adjacent words: the rows here are
// about half as large as the archive's, which only makes the erasure's index removal look
// cheaper than it is by that much.
func (l *loader) searchRows(ctx context.Context) error {
	// The text goes in as bytes: substr of a BLOB (bytea) finds its offset directly, of a
	// TEXT only by walking the characters before it. The text is ASCII.
	text := []byte(bodyText())
	offset := fmt.Sprintf(`1 + CAST((m.id * 7919) %% %d AS INTEGER)`, len(text)-bodyChars)
	body := fmt.Sprintf(`CAST(substr(?, %s, %d) AS TEXT)`, offset, bodyChars)
	rcpts := `COALESCE((SELECT group_concat(r."to", ' ') FROM rcpt r WHERE r.id = m.id), '')`
	atts := `CASE WHEN m.attachments > 0 THEN 'report-' || m.id || '.pdf' ELSE '' END`
	q := `INSERT INTO message_search (rowid, terms)
		SELECT m.id, m.subject || ' ' || m."from" || ' ' || ` + rcpts + ` || ' ' || ` + body + ` || ' ' || ` + atts + `
		FROM metadata m WHERE m.deleted = 0 AND m.erased_by IS NULL ORDER BY m.id`
	if l.d == database.Postgres {
		rcpts = `COALESCE((SELECT string_agg(r."to", ' ') FROM rcpt r WHERE r.id = m.id), '')`
		body = fmt.Sprintf(`convert_from(substring(?::bytea from %s for %d), 'UTF8')`, offset, bodyChars)
		q = `INSERT INTO message_search (id, document)
			SELECT m.id, strip(to_tsvector('simple', m.subject || ' ' || m."from" || ' ' || ` + rcpts + ` || ' ' ||
				` + atts + ` || ' ' || ` + body + `))
			FROM metadata m WHERE m.deleted = 0 AND m.erased_by IS NULL`
	}
	if err := l.exec(ctx, q, text); err != nil {
		return fmt.Errorf("search index rows: %w", err)
	}
	return nil
}

// indexRows counts the rows of the full-text index.
func indexRows(ctx context.Context, db *database.DB) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM message_search`).Scan(&n)
	return n, err
}
