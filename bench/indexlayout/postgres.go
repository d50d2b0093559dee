package main

import (
	"context"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
)

// PostgreSQL's alternatives to the chosen layout (-postgres-alternative).
const (
	pgBtree     = "btree"
	pgPositions = "positions"
	pgBuckets   = "buckets"
)

// postgresLayouts: the chosen tsvector with a GIN index of archive/search.go (pgIndex,
// migration postgres/00009) against a plain B-tree, or against a tsvector of the words
// with their positions. All are vacuumed and analysed after the fill, as autovacuum would
// (the benchmark server runs without it): the planner needs statistics, GIN's pending
// list is merged and the B-tree's heap marked all-visible.
func postgresLayouts(alternative string) [2]layout {
	switch alternative {
	case pgPositions:
		return [2]layout{tsvectorGIN{}, tsvectorGIN{positions: true}}
	case pgBuckets:
		return [2]layout{tsvectorGIN{positions: true}, tsvectorGIN{positions: true, buckets: true}}
	}
	return [2]layout{tsvectorGIN{}, &btree{
		label: `B-tree term_index(term COLLATE "C", id)`,
		table: "term_index",
		ddl:   []string{`CREATE TABLE term_index (term text COLLATE "C" NOT NULL, id bigint NOT NULL, PRIMARY KEY (term, id))`},
		after: []string{`VACUUM ANALYZE term_index`},
		size:  pgSize("term_index"),
	}}
}

// tsvectorGIN is one tsvector a message under a GIN index (gin_pending_list_limit 64 MB,
// as migration postgres/00009 makes it). Without positions it is pgIndex of
// archive/search.go: array_to_tsvector of the terms, each one lexeme. With positions, the
// words with the positions they keep and only the pairs those leave uncovered
// (analyzer.TermSet.Positioned), a pair queried as ('a' <-> 'b' | 'a b').
//
// With buckets, each covered pair also gives the lexeme of its bucket (pairBucket), and a
// pair is ('#bucket' & 'a' <-> 'b' | 'a b'): GIN then rechecks the positions of only the
// messages that hold the pair's bucket besides both words. With positions, the documents
// are moved out of the heap as migration postgres/00024 does (toast_pad and
// toast_tuple_target 128), so that reading the ids of a common word's messages reads a
// narrow heap.
type tsvectorGIN struct{ positions, buckets bool }

func (l tsvectorGIN) name() string {
	switch {
	case l.buckets:
		return "tsvector of words with positions and pair buckets + GIN"
	case l.positions:
		return "tsvector of words with positions + GIN"
	}
	return "tsvector (array_to_tsvector) + GIN"
}

func (l tsvectorGIN) schema() []string {
	table := `CREATE TABLE message_search (id BIGINT PRIMARY KEY, document TSVECTOR NOT NULL)`
	if l.positions {
		table = `CREATE TABLE message_search (id BIGINT PRIMARY KEY, document TSVECTOR NOT NULL,
			toast_pad TEXT NOT NULL DEFAULT repeat('#', 2048)) WITH (toast_tuple_target = 128)`
	}
	return []string{
		table,
		`CREATE INDEX message_search_document ON message_search USING GIN (document) WITH (gin_pending_list_limit = 65536)`,
	}
}

func (l tsvectorGIN) insert(ctx context.Context, tx *database.Tx, batch []message) error {
	if l.positions {
		return insertDocuments(ctx, tx, `INSERT INTO message_search (id, document) VALUES `,
			`(?, ?::tsvector)`, batch, func(m message) []any { return []any{m.id, tsvectorText(m, l.buckets)} })
	}
	return insertDocuments(ctx, tx, `INSERT INTO message_search (id, document) VALUES `,
		`(?, array_to_tsvector(?::text[]))`, batch, func(m message) []any { return []any{m.id, m.terms} })
}

func (tsvectorGIN) upkeep() []string { return []string{`VACUUM ANALYZE message_search`} }
func (tsvectorGIN) forms() []string  { return []string{""} }

func (tsvectorGIN) sizes(ctx context.Context, db *database.DB) ([]sizeFigure, error) {
	return pgSize("message_search")(ctx, db)
}

// tsLexeme quotes a lexeme for a tsvector or tsquery literal.
func tsLexeme(t string) string {
	return `'` + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(t) + `'`
}

// pairBucket is the lexeme of a pair's bucket: # and the low 16 bits of its FNV-1a hash
// in hex (no word holds #, so no word or prefix query meets it).
func pairBucket(pair string) string {
	h := fnv.New32a()
	h.Write([]byte(pair))
	return "#" + strconv.FormatUint(uint64(h.Sum32()&0xffff), 16)
}

// tsvectorText is the tsvector literal of m's positioned terms as the archive writes it
// (archive.PostgresDocument), with buckets preceded by the bucket lexemes of its covered
// pairs.
func tsvectorText(m message, buckets bool) string {
	p := m.positioned
	var b strings.Builder
	if buckets {
		seen := map[string]bool{}
		for _, t := range m.terms {
			if strings.Contains(t, analyzer.PairSeparator) && !slices.Contains(p.Pairs, t) {
				if k := pairBucket(t); !seen[k] {
					seen[k] = true
					b.WriteString(tsLexeme(k) + " ")
				}
			}
		}
	}
	b.WriteString(archive.PostgresDocument(p))
	return b.String()
}

// query is pgIndex.match's tsquery: quoted lexemes, prefixes with :*, all required; with
// positions a pair is its words next to each other or its lexeme.
func (l tsvectorGIN) query(q analyzer.Query, _ string) (string, []any) {
	parts := make([]string, 0, len(q.Terms)+len(q.Prefixes))
	for _, t := range q.Terms {
		a, b, isPair := strings.Cut(t, analyzer.PairSeparator)
		if l.positions && isPair {
			adjacent := tsLexeme(a) + " <-> " + tsLexeme(b)
			if l.buckets {
				adjacent = tsLexeme(pairBucket(t)) + " & " + adjacent
			}
			parts = append(parts, "("+adjacent+" | "+tsLexeme(t)+")")
			continue
		}
		parts = append(parts, tsLexeme(t))
	}
	for _, p := range q.Prefixes {
		parts = append(parts, tsLexeme(p)+`:*`)
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
