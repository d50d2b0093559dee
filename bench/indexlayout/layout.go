package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// layout is one way of storing the index terms, in a database of its own.
type layout interface {
	// name is what the report calls it.
	name() string
	// schema creates its tables in an empty database.
	schema() []string
	// insert stores the terms of a batch of messages inside one transaction.
	insert(ctx context.Context, tx *database.Tx, batch []message) error
	// upkeep runs after the fill, untimed: statistics, and PostgreSQL's VACUUM.
	upkeep() []string
	// sizes measures it on disk after the fill, one figure per measure.
	sizes(ctx context.Context, db *database.DB) ([]sizeFigure, error)
	// forms names the ways it can intersect terms: several for a B-tree (the benchmark
	// times each and reports the faster), one ("") for a full-text index.
	forms() []string
	// query is the statement selecting the ids of the messages matching q.
	query(q analyzer.Query, form string) (string, []any)
}

// sizeFigure is one size measure of a layout.
type sizeFigure struct {
	measure string
	bytes   int64
}

// Intersection forms of a B-tree layout.
const (
	formIn       = "IN"
	formSelfJoin = "self-join"
)

// Bounds of one multi-row INSERT: B-tree rows as archive/search.go's mysqlIndex writes
// them (termChunk), full-text rows as insertIndexRows (indexChunk).
const (
	btreeChunk = 5000
	textChunk  = 100
)

// btree is an inverted index in a B-tree: one row per (term, message), the primary key
// (term, id), or (tenant, term, id) when tenant is set.
type btree struct {
	label  string
	table  string
	tenant bool   // rows hold the tenant first (MariaDB's search_term)
	docs   string // a table of one row a message holding its terms, one to a line ("": none)
	ddl    []string
	after  []string
	size   func(ctx context.Context, db *database.DB) ([]sizeFigure, error)
}

// benchTenant is the tenant of every message where a layout stores one.
const benchTenant = "default"

func (b *btree) name() string     { return b.label }
func (b *btree) schema() []string { return b.ddl }
func (b *btree) upkeep() []string { return b.after }
func (b *btree) forms() []string  { return []string{formIn, formSelfJoin} }

func (b *btree) columns() []string {
	if b.tenant {
		return []string{"tenant_id", "term", "id"}
	}
	return []string{"term", "id"}
}

func (b *btree) sizes(ctx context.Context, db *database.DB) ([]sizeFigure, error) {
	return b.size(ctx, db)
}

// insert writes the batch's rows in key order, btreeChunk to a statement, as mysqlIndex
// does: the rows of one term go to one place of the key.
func (b *btree) insert(ctx context.Context, tx *database.Tx, batch []message) error {
	type row struct {
		term string
		id   int64
	}
	var rows []row
	for _, m := range batch {
		for _, t := range m.terms {
			rows = append(rows, row{t, m.id})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(strings.Compare(a.term, b.term), cmp.Compare(a.id, b.id)) })
	cols := b.columns()
	tmpl := "(" + database.InList(len(cols)) + ")"
	prefix := "INSERT INTO " + b.table + " (" + strings.Join(cols, ", ") + ") VALUES "
	for start := 0; start < len(rows); start += btreeChunk {
		chunk := rows[start:min(start+btreeChunk, len(rows))]
		args := make([]any, 0, len(cols)*len(chunk))
		for _, r := range chunk {
			if b.tenant {
				args = append(args, benchTenant)
			}
			args = append(args, r.term, r.id)
		}
		if _, err := tx.Exec(ctx, prefix+database.Rows(len(chunk), tmpl), args...); err != nil {
			return fmt.Errorf("insert into %s: %w", b.table, err)
		}
	}
	if b.docs == "" {
		return nil
	}
	return insertDocuments(ctx, tx, `INSERT INTO `+b.docs+` (id, tenant_id, terms) VALUES `, `(?, ?, ?)`, batch,
		func(m message) []any { return []any{m.id, benchTenant, strings.Join(m.terms, "\n")} })
}

// query: a term is a range of the key, a prefix p the range [p, analyzer.PrefixEnd(p)),
// and an intersection either "id IN (…)" of the other items or a self-join on the id.
func (b *btree) query(q analyzer.Query, form string) (string, []any) {
	items := b.items(q)
	distinct := ""
	if len(q.Prefixes) > 0 {
		distinct = "DISTINCT " // a message may hold several terms with the prefix
	}
	if form == formSelfJoin && len(items) > 1 {
		sql := "SELECT " + distinct + "t0.id FROM " + b.table + " t0"
		var where []string
		var args []any
		for k, it := range items {
			if k > 0 {
				sql += fmt.Sprintf(" JOIN %s t%d ON t%d.id = t0.id", b.table, k, k)
			}
			where, args = append(where, fmt.Sprintf(it.cond, fmt.Sprintf("t%d.", k))), append(args, it.args...)
		}
		return sql + " WHERE " + strings.Join(where, " AND "), args
	}
	sql := "SELECT " + distinct + "id FROM " + b.table + " WHERE " + fmt.Sprintf(items[0].cond, "")
	args := items[0].args
	for _, it := range items[1:] {
		sql += " AND id IN (SELECT id FROM " + b.table + " WHERE " + fmt.Sprintf(it.cond, "") + ")"
		args = append(args, it.args...)
	}
	return sql, args
}

// btreeItem is one condition of a B-tree query, its columns written %[1]s<column> so
// that a self-join can qualify them.
type btreeItem struct {
	cond string
	args []any
}

func (b *btree) items(q analyzer.Query) []btreeItem {
	var out []btreeItem
	for _, t := range q.Terms {
		out = append(out, btreeItem{"%[1]sterm = ?", []any{t}})
	}
	for _, p := range q.Prefixes {
		out = append(out, btreeItem{"%[1]sterm >= ? AND %[1]sterm < ?", []any{p, analyzer.PrefixEnd(p)}})
	}
	if b.tenant {
		for k := range out {
			out[k] = btreeItem{"%[1]stenant_id = ? AND " + out[k].cond, append([]any{benchTenant}, out[k].args...)}
		}
	}
	return out
}

// ftsDocument is a message's terms as one text for a full-text index: the tokens
// separated by spaces.
func ftsDocument(terms []string) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ftsToken(t))
	}
	return b.String()
}

// insertDocuments inserts one row per message with prefix + row template, textChunk rows
// to a statement; argsOf gives a message's arguments.
func insertDocuments(ctx context.Context, tx *database.Tx, prefix, row string, batch []message, argsOf func(message) []any) error {
	for start := 0; start < len(batch); start += textChunk {
		chunk := batch[start:min(start+textChunk, len(batch))]
		var args []any
		for _, m := range chunk {
			args = append(args, argsOf(m)...)
		}
		if _, err := tx.Exec(ctx, prefix+database.Rows(len(chunk), row), args...); err != nil {
			return err
		}
	}
	return nil
}
