package main

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// MariaDB's alternatives to the chosen layout (-mysql-alternative).
const (
	myFulltext = "fulltext"
	myIDIndex  = "idindex"
)

// mysqlLayouts: the chosen B-tree search_term of archive/search.go (mysqlIndex,
// migrations mysql/00006, 00010 and 00024: no index by id, a message's terms kept in one
// row of search_doc for removals) against alt: InnoDB FULLTEXT over one text a message,
// its predecessor, or the same B-tree with an index by id and no search_doc (idindex, the
// layout before 00024). Both are analysed after the fill.
func mysqlLayouts(alt string) [2]layout {
	chosen := &btree{
		label:  "B-tree search_term(tenant_id, term, id); search_doc(id, terms)",
		table:  "search_term",
		tenant: true,
		docs:   "search_doc",
		ddl: []string{`CREATE TABLE search_term (
    tenant_id VARCHAR(64)  NOT NULL,
    term      VARCHAR(257) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    id        BIGINT       NOT NULL,
    PRIMARY KEY (tenant_id, term, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`, `CREATE TABLE search_doc (
    id        BIGINT      PRIMARY KEY,
    tenant_id VARCHAR(64) NOT NULL,
    terms     MEDIUMTEXT  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`},
		after: []string{`ANALYZE TABLE search_term, search_doc`},
		size:  mysqlSize("search_term", "search_doc"),
	}
	if alt != myIDIndex {
		return [2]layout{chosen, innodbFulltext{}}
	}
	return [2]layout{chosen, &btree{
		label:  "B-tree search_term(tenant_id, term, id) with an index by id",
		table:  "search_term",
		tenant: true,
		ddl: []string{`CREATE TABLE search_term (
    tenant_id VARCHAR(64)  NOT NULL,
    term      VARCHAR(257) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    id        BIGINT       NOT NULL,
    PRIMARY KEY (tenant_id, term, id),
    KEY search_term_id (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`},
		after: []string{`ANALYZE TABLE search_term`},
		size:  mysqlSize("search_term"),
	}}
}

// innodbFulltext is one row a message holding its terms as one text, a pair's space
// written '_' (a word character of InnoDB's parser, so a pair is one token), under a
// FULLTEXT index; the comparison is binary, as the analyzer's terms are folded already.
type innodbFulltext struct{}

func (innodbFulltext) name() string { return "InnoDB FULLTEXT message_search(document)" }

func (innodbFulltext) schema() []string {
	return []string{`CREATE TABLE message_search (
    id        BIGINT      PRIMARY KEY,
    tenant_id VARCHAR(64) NOT NULL,
    document  MEDIUMTEXT  NOT NULL,
    FULLTEXT KEY message_search_document (document)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`}
}

func (innodbFulltext) insert(ctx context.Context, tx *database.Tx, batch []message) error {
	return insertDocuments(ctx, tx, `INSERT INTO message_search (id, tenant_id, document) VALUES `, `(?, ?, ?)`, batch,
		func(m message) []any { return []any{m.id, benchTenant, ftsDocument(m.terms)} })
}

// upkeep: OPTIMIZE TABLE rebuilds the table and its FULLTEXT index, so that no document is
// left in InnoDB's FULLTEXT cache: without it a prefix query right after the fill missed
// some of the last batch's documents now and then (MariaDB 10.11, seen in CI).
func (innodbFulltext) upkeep() []string {
	return []string{`OPTIMIZE TABLE message_search`, `ANALYZE TABLE message_search`}
}
func (innodbFulltext) forms() []string { return []string{""} }

func (innodbFulltext) sizes(ctx context.Context, db *database.DB) ([]sizeFigure, error) {
	return mysqlSize("message_search")(ctx, db)
}

// query requires every term (+token) and prefix (+prefix*) in boolean mode.
func (innodbFulltext) query(q analyzer.Query, _ string) (string, []any) {
	parts := make([]string, 0, len(q.Terms)+len(q.Prefixes))
	for _, t := range q.Terms {
		parts = append(parts, "+"+ftsToken(t))
	}
	for _, p := range q.Prefixes {
		parts = append(parts, "+"+p+"*")
	}
	return `SELECT id FROM message_search WHERE tenant_id = ? AND MATCH (document) AGAINST (? IN BOOLEAN MODE)`,
		[]any{benchTenant, strings.Join(parts, " ")}
}

// mysqlSize measures the table two ways: data_length + index_length of
// information_schema.TABLES (after ANALYZE TABLE), which leaves out the auxiliary tables
// that hold a FULLTEXT index, and the allocated size of every tablespace file of the
// layout's database, which counts them.
func mysqlSize(tables ...string) func(context.Context, *database.DB) ([]sizeFigure, error) {
	return func(ctx context.Context, db *database.DB) ([]sizeFigure, error) {
		var tbl, files int64
		args := make([]any, len(tables))
		for i, t := range tables {
			args[i] = t
		}
		err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.TABLES
			WHERE table_schema = DATABASE() AND table_name IN (`+database.InList(len(tables))+`)`, args...).Scan(&tbl)
		if err != nil {
			return nil, fmt.Errorf("table size: %w", err)
		}
		err = db.QueryRowContext(ctx, `SELECT COALESCE(SUM(allocated_size), 0) FROM information_schema.INNODB_SYS_TABLESPACES
			WHERE SUBSTRING_INDEX(name, '/', 1) = DATABASE()`).Scan(&files)
		if err != nil {
			return nil, fmt.Errorf("tablespace size: %w", err)
		}
		return []sizeFigure{{"data_length+index_length", tbl}, {"all .ibd files (FULLTEXT aux. too)", files}}, nil
	}
}

// ftRules are the server's FULLTEXT token rules: a token shorter than minToken or longer
// than maxToken characters, or on the stop-word list, is not indexed, and a query that
// requires such a token finds nothing (checked on MariaDB 10.11).
type ftRules struct {
	minToken, maxToken int
	stopwordsOn        bool
	stopwords          map[string]bool
	stopwordTable      string // the server's or user's own list, "" for InnoDB's default
}

// readFTRules reads the rules from the server.
func readFTRules(ctx context.Context, db *database.DB) (ftRules, error) {
	r := ftRules{stopwords: map[string]bool{}}
	var server, user *string
	err := db.QueryRowContext(ctx, `SELECT @@innodb_ft_min_token_size, @@innodb_ft_max_token_size,
		@@innodb_ft_enable_stopword, @@innodb_ft_server_stopword_table, @@innodb_ft_user_stopword_table`).
		Scan(&r.minToken, &r.maxToken, &r.stopwordsOn, &server, &user)
	if err != nil {
		return r, fmt.Errorf("fulltext settings: %w", err)
	}
	for _, t := range []*string{user, server} {
		if t != nil && *t != "" && r.stopwordTable == "" {
			r.stopwordTable = *t
		}
	}
	if r.stopwordsOn {
		err = r.readStopwords(ctx, db)
	}
	return r, err
}

// readStopwords reads the stop-word table in force: the user's or the server's
// ("db/table"), else InnoDB's default list.
func (r *ftRules) readStopwords(ctx context.Context, db *database.DB) error {
	from := `information_schema.INNODB_FT_DEFAULT_STOPWORD`
	if r.stopwordTable != "" {
		schema, table, ok := strings.Cut(r.stopwordTable, "/")
		if !ok {
			return fmt.Errorf("stop-word table %q: want db/table", r.stopwordTable)
		}
		from = "`" + strings.ReplaceAll(schema, "`", "``") + "`.`" + strings.ReplaceAll(table, "`", "``") + "`"
	}
	rows, err := db.QueryContext(ctx, `SELECT value FROM `+from)
	if err != nil {
		return fmt.Errorf("stop-words: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			return err
		}
		r.stopwords[w] = true
	}
	return rows.Err()
}

// indexed says whether InnoDB FULLTEXT indexes term (as ftsToken writes it).
func (r ftRules) indexed(term string) bool {
	tok := ftsToken(term)
	n := utf8.RuneCountInString(tok)
	return n >= r.minToken && n <= r.maxToken && !r.stopwords[tok]
}

func (r ftRules) String() string {
	s := fmt.Sprintf("innodb_ft_min_token_size=%d, innodb_ft_max_token_size=%d", r.minToken, r.maxToken)
	switch {
	case r.stopwordsOn && r.stopwordTable != "":
		return s + fmt.Sprintf(", stop-words on (table %s, %d words)", r.stopwordTable, len(r.stopwords))
	case r.stopwordsOn:
		return s + fmt.Sprintf(", stop-words on (InnoDB's default list, %d words)", len(r.stopwords))
	}
	return s + ", stop-words off"
}
