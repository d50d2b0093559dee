package archive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// mysqlIndex is an inverted index in a B-tree: search_term holds one (tenant, term, id) row
// per distinct term of a message (see indexTerms), and a word is a range of the primary
// key. InnoDB FULLTEXT, its predecessor, took about a second to match a word that most
// messages hold. It also helps MariaDB's optimizer plan Search (see searchPlanner).
// search_term has no index by id (it would hold every row a second time, and the writes
// and the size are what limit this layout): search_doc keeps each message's terms in one
// row, one to a line, and remove deletes the message's search_term rows by primary key.
type mysqlIndex struct {
	mu           sync.Mutex
	hasLimitHint *bool // nil until the server was asked
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
		for _, t := range e.terms {
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
	return addDocs(ctx, tx, entries)
}

// docSeparator separates a message's terms in search_doc: no term holds a line break
// (analyzer.Words).
const docSeparator = "\n"

// addDocs writes the search_doc row of each entry that has terms, at most termChunkBytes of
// terms to a statement (a message's terms are at most maxTermBytes).
func addDocs(ctx context.Context, tx *database.Tx, entries []indexEntry) error {
	var args []any
	n, size := 0, 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, `INSERT INTO search_doc (id, tenant_id, terms) VALUES `+database.Rows(n, `(?, ?, ?)`), args...)
		args, n, size = args[:0], 0, 0
		if err != nil {
			return fmt.Errorf("index terms: %w", err)
		}
		return nil
	}
	for _, e := range entries {
		if len(e.terms) == 0 {
			continue
		}
		doc := strings.Join(e.terms, docSeparator)
		if n > 0 && size+len(doc) > termChunkBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		args = append(args, e.id, e.tenant, doc)
		n, size = n+1, size+len(doc)
	}
	return flush()
}

// remove deletes the messages' search_term rows by primary key, from the terms their
// search_doc rows list, and then those rows.
func (*mysqlIndex) remove(ctx context.Context, tx *database.Tx, ids []int64) error {
	for start := 0; start < len(ids); start += removeChunk {
		chunk := ids[start:min(start+removeChunk, len(ids))]
		docs, err := readDocs(ctx, tx, chunk)
		if err != nil {
			return err
		}
		if err := removeTerms(ctx, tx, docs); err != nil {
			return err
		}
	}
	return removeIDs(ctx, tx, `DELETE FROM search_doc WHERE id IN `, ids)
}

// searchDoc is one row of search_doc.
type searchDoc struct {
	id     int64
	tenant string
	terms  []string
}

// readDocs reads the search_doc rows of ids (at most removeChunk).
func readDocs(ctx context.Context, tx *database.Tx, ids []int64) ([]searchDoc, error) {
	rows, err := tx.Query(ctx, `SELECT id, tenant_id, terms FROM search_doc WHERE id IN (`+database.InList(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("read indexed terms: %w", err)
	}
	defer rows.Close()
	var docs []searchDoc
	for rows.Next() {
		var d searchDoc
		var terms string
		if err := rows.Scan(&d.id, &d.tenant, &terms); err != nil {
			return nil, fmt.Errorf("read indexed terms: %w", err)
		}
		d.terms = strings.Split(terms, docSeparator)
		docs = append(docs, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read indexed terms: %w", err)
	}
	return docs, nil
}

// removeKeys bounds the primary keys one DELETE of removeTerms names: MariaDB reads each
// as a range of the primary key (checked with EXPLAIN on 10.11 up to 5,000 keys of 200
// bytes; past range_optimizer_max_mem_size it would scan the table).
const removeKeys = 1000

// removeTerms deletes the docs' search_term rows, removeKeys primary keys to a statement.
func removeTerms(ctx context.Context, tx *database.Tx, docs []searchDoc) error {
	args := make([]any, 0, 3*removeKeys)
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, `DELETE FROM search_term WHERE (tenant_id, term, id) IN (`+database.Rows(len(args)/3, `(?, ?, ?)`)+`)`, args...)
		args = args[:0]
		if err != nil {
			return fmt.Errorf("remove terms: %w", err)
		}
		return nil
	}
	for _, d := range docs {
		for _, t := range d.terms {
			if args = append(args, d.tenant, t, d.id); len(args) == 3*removeKeys {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// match requires every term and prefix of q, each a lookup of (tenant, term, m.id) or a
// range of (tenant, term), whichever the optimizer picks.
func (x *mysqlIndex) match(q analyzer.Query) (string, []any) {
	return x.termConds(q.Terms, q.Prefixes)
}

func (*mysqlIndex) termConds(terms, prefixes []string) (string, []any) {
	conds := make([]string, 0, len(terms)+len(prefixes))
	args := make([]any, 0, len(terms)+2*len(prefixes))
	for _, t := range terms {
		conds = append(conds, `m.id IN (SELECT id FROM search_term WHERE tenant_id = m.tenant_id AND term = ?)`)
		args = append(args, t)
	}
	for _, p := range prefixes {
		conds = append(conds, `m.id IN (SELECT id FROM search_term WHERE tenant_id = m.tenant_id AND term >= ? AND term < ?)`)
		args = append(args, p, analyzer.PrefixEnd(p))
	}
	return strings.Join(conds, " AND "), args
}

// hits counts the tenant's messages that hold the first term (the one driveFrom reads), up
// to max+1: a range of the primary key.
func (x *mysqlIndex) hits(ctx context.Context, r queryer, d database.Dialect, tenant string, text analyzer.Query, max int) (int, error) {
	if len(text.Terms) == 0 {
		return max + 1, nil
	}
	return countHits(ctx, r, d, `SELECT id FROM search_term WHERE tenant_id = ? AND term = ?`, []any{tenant, text.Terms[0]}, max)
}

// exactHits: hits counts the tenant's messages holding the first term, which are those
// holding the text when it is that term alone.
func (*mysqlIndex) exactHits(text analyzer.Query) bool {
	return len(text.Terms) == 1 && len(text.Prefixes) == 0
}

// driveCap: a range of the primary key and an InnoDB lookup by primary key a hit, several
// times SQLite's cost a row.
func (*mysqlIndex) driveCap() int { return 20000 }

// driveFrom makes the count of a text search read search_term first: MariaDB's join
// optimizer, blind to the count's LIMIT and misled by the estimate of a tenant's messages
// (half the table), otherwise walks the messages and looks each one up, five times slower
// for a word in a third of them. The first term drives (a query of prefixes only is left
// to the optimizer); the optimizer may still put a rarer one before it.
func (x *mysqlIndex) driveFrom(q analyzer.Query) (from, cond string, args []any, ok bool) {
	if len(q.Terms) == 0 {
		return "", "", nil, false
	}
	cond, args = `t.term = ?`, []any{q.Terms[0]}
	if len(q.Terms) > 1 || len(q.Prefixes) > 0 {
		rest, restArgs := x.termConds(q.Terms[1:], q.Prefixes)
		cond, args = cond+` AND `+rest, append(args, restArgs...)
	}
	return `search_term t STRAIGHT_JOIN metadata m ON m.tenant_id = t.tenant_id AND m.id = t.id`, cond, args, true
}

// pagePrefix asks MariaDB (10.6.20, 10.11.10, 11.4.4 and later) to weigh the LIMIT of a
// text search's page when it orders the join: a common word then walks metadata_tenant_datekey_visible
// newest first and stops after a page, a rare one reads its terms and sorts them. The ratio
// is how many times cheaper the walk must look: InnoDB estimates a word's rows about twice
// too high, so with k words the walk looks 2^(k-1) times better than it is. On the
// benchmark archive ratio 1 was best for single words (a word in 5 % of the messages: 8 ms
// against 45 ms without the hint) and 2 for pairs. With a date range the optimizer chooses
// well without it. The server is asked once whether it knows
// optimizer_join_limit_pref_ratio; MySQL and older MariaDB get no hint.
func (x *mysqlIndex) pagePrefix(ctx context.Context, db *database.DB, q analyzer.Query) string {
	if !x.limitHint(ctx, db) {
		return ""
	}
	k := len(q.Terms) + len(q.Prefixes)
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

// walksAddresses: address_role_addr_date and address_role_domain_date (migration 00025)
// give an address's messages newest first, as on SQLite and PostgreSQL.
func (*mysqlIndex) walksAddresses() bool { return true }
