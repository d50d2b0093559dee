package main

import (
	"context"
	"strings"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// postgresLayouts: the chosen tsvector with a GIN index of archive/search.go (pgIndex,
// migration postgres/00009) against a plain B-tree. Both are vacuumed and analysed after
// the fill, as autovacuum would (the benchmark server runs without it): the planner needs
// statistics, GIN's pending list is merged and the B-tree's heap marked all-visible.
func postgresLayouts() [2]layout {
	return [2]layout{tsvectorGIN{}, &btree{
		label: `B-tree term_index(term COLLATE "C", id)`,
		table: "term_index",
		ddl:   []string{`CREATE TABLE term_index (term text COLLATE "C" NOT NULL, id bigint NOT NULL, PRIMARY KEY (term, id))`},
		after: []string{`VACUUM ANALYZE term_index`},
		size:  pgSize("term_index"),
	}}
}

// tsvectorGIN is pgIndex: one tsvector a message made with array_to_tsvector (each term
// one lexeme, exactly as given), under a GIN index.
type tsvectorGIN struct{}

func (tsvectorGIN) name() string { return "tsvector (array_to_tsvector) + GIN" }

func (tsvectorGIN) schema() []string {
	return []string{
		`CREATE TABLE message_search (id BIGINT PRIMARY KEY, document TSVECTOR NOT NULL)`,
		`CREATE INDEX message_search_document ON message_search USING GIN (document)`,
	}
}

func (tsvectorGIN) insert(ctx context.Context, tx *database.Tx, batch []message) error {
	return insertDocuments(ctx, tx, `INSERT INTO message_search (id, document) VALUES `,
		`(?, array_to_tsvector(?::text[]))`, batch, func(m message) []any { return []any{m.id, m.terms} })
}

func (tsvectorGIN) upkeep() []string { return []string{`VACUUM ANALYZE message_search`} }
func (tsvectorGIN) forms() []string  { return []string{""} }

func (tsvectorGIN) sizes(ctx context.Context, db *database.DB) ([]sizeFigure, error) {
	return pgSize("message_search")(ctx, db)
}

// query is pgIndex.match's tsquery: quoted lexemes, prefixes with :*, all required.
func (tsvectorGIN) query(q analyzer.Query, _ string) (string, []any) {
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
	return `SELECT id FROM message_search WHERE document @@ ?::tsquery`, []any{strings.Join(parts, " & ")}
}

// pgSize is pg_total_relation_size of the table: its heap, TOAST and every index.
func pgSize(table string) func(context.Context, *database.DB) ([]sizeFigure, error) {
	return func(ctx context.Context, db *database.DB) ([]sizeFigure, error) {
		var n int64
		err := db.QueryRowContext(ctx, db.Rebind(`SELECT pg_total_relation_size(?::regclass)`), table).Scan(&n)
		return []sizeFigure{{"pg_total_relation_size", n}}, err
	}
}
