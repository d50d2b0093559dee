package main

import (
	"context"
	"strings"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// sqliteLayouts: the chosen FTS5 term store of archive/search.go (sqliteIndex, migration
// sqlite/00009) against a plain B-tree.
func sqliteLayouts() [2]layout {
	return [2]layout{ftsStore{}, &btree{
		label: "B-tree term_index(term, id) WITHOUT ROWID",
		table: "term_index",
		ddl:   []string{`CREATE TABLE term_index (term TEXT NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (term, id)) WITHOUT ROWID`},
		size:  sqliteSize,
	}}
}

// ftsStore is sqliteIndex: a contentless FTS5 table whose ascii tokenizer (with '_' a
// token character) keeps each term, a pair's space written '_', as one token; no
// positions.
type ftsStore struct{}

func (ftsStore) name() string {
	return `FTS5 term store (contentless_delete=1, detail=none, ascii tokenchars '_')`
}

func (ftsStore) schema() []string {
	return []string{`CREATE VIRTUAL TABLE message_search USING fts5 (
    terms, content = '', contentless_delete = 1, detail = none,
    tokenize = "ascii tokenchars '_'"
)`}
}

func (ftsStore) insert(ctx context.Context, tx *database.Tx, batch []message) error {
	return insertDocuments(ctx, tx, `INSERT INTO message_search (rowid, terms) VALUES `, `(?, ?)`, batch,
		func(m message) []any { return []any{m.id, ftsDocument(m.terms)} })
}

func (ftsStore) upkeep() []string { return nil } // the service never runs ANALYZE or optimize
func (ftsStore) forms() []string  { return []string{""} }

func (ftsStore) sizes(ctx context.Context, db *database.DB) ([]sizeFigure, error) {
	return sqliteSize(ctx, db)
}

// query is sqliteIndex.match's FTS5 query: every term a string, every prefix a string
// with *, all required.
func (ftsStore) query(q analyzer.Query, _ string) (string, []any) {
	parts := make([]string, 0, len(q.Terms)+len(q.Prefixes))
	for _, t := range q.Terms {
		parts = append(parts, `"`+ftsToken(t)+`"`)
	}
	for _, p := range q.Prefixes {
		parts = append(parts, `"`+p+`"*`)
	}
	return `SELECT rowid FROM message_search WHERE message_search MATCH ?`, []any{strings.Join(parts, " AND ")}
}

// sqliteSize is page_count * page_size of the layout's own database file.
func sqliteSize(ctx context.Context, db *database.DB) ([]sizeFigure, error) {
	var pages, pageSize int64
	if err := db.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return nil, err
	}
	if err := db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return nil, err
	}
	return []sizeFigure{{"page_count*page_size", pages * pageSize}}, nil
}
