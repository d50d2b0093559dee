package archive

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// mysqlIndex is an inverted index in a B-tree: search_term holds one (tenant, term, date
// key, id) row per distinct word of a message (see indexTerms), and a word is a range of
// the primary key, its messages newest first as every page is ordered (migration 00031):
// a text search reads its rarest word's range in page order and stops after the page, a
// date window is a part of the range, and each other word is a lookup of the message's own
// key. InnoDB FULLTEXT, its predecessor, took about a second to match a word that most
// messages hold. search_term has no index by id (it would hold every row a second time,
// and the writes and the size are what limit this layout): search_doc keeps each message's
// terms in one row, one to a line, with its date key, and remove deletes the message's
// search_term rows by primary key.
//
// The pairs of adjacent words ("w1 w2", analyzer.PairSeparator) are in search_doc only
// (migration 00030): they are six in ten of a message's terms and nearly every one a key
// of its own, so each went to a page of the table no other row of the commit touched, and
// at a million messages the table was twice the buffer pool. A phrase requires its words
// from search_term and then its pairs from the message's search_doc row (pairCond).
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
	datekey, id  int64
}

func (*mysqlIndex) add(ctx context.Context, tx *database.Tx, entries []indexEntry) error {
	var rows []termRow
	for _, e := range entries {
		for _, t := range e.terms {
			if !isPair(t) {
				rows = append(rows, termRow{e.tenant, t, e.datekey, e.id})
			}
		}
	}
	// In key order, the rows of one term go to one place of the primary key.
	slices.SortFunc(rows, func(a, b termRow) int {
		return cmp.Or(strings.Compare(a.tenant, b.tenant), strings.Compare(a.term, b.term), cmp.Compare(a.datekey, b.datekey), cmp.Compare(a.id, b.id))
	})
	for len(rows) > 0 {
		n, size := 0, 0
		for n < len(rows) && n < termChunk && (n == 0 || size+len(rows[n].tenant)+len(rows[n].term) <= termChunkBytes) {
			size += len(rows[n].tenant) + len(rows[n].term)
			n++
		}
		args := make([]any, 0, 4*n)
		for _, r := range rows[:n] {
			args = append(args, r.tenant, r.term, r.datekey, r.id)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO search_term (tenant_id, term, datekey, id) VALUES `+database.Rows(n, `(?, ?, ?, ?)`), args...); err != nil {
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
		_, err := tx.Exec(ctx, `INSERT INTO search_doc (id, tenant_id, datekey, terms) VALUES `+database.Rows(n, `(?, ?, ?, ?)`), args...)
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
		args = append(args, e.id, e.tenant, e.datekey, doc)
		n, size = n+1, size+len(doc)
	}
	return flush()
}

// remove deletes the messages' search_term rows by primary key, from the terms and date
// key their search_doc rows hold, and then those rows.
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

// isPair says whether an index term is a pair of adjacent words: words never hold the
// separator.
func isPair(term string) bool { return strings.Contains(term, analyzer.PairSeparator) }

// searchDoc is one row of search_doc.
type searchDoc struct {
	id, datekey int64
	tenant      string
	terms       []string
}

// readDocs reads the search_doc rows of ids (at most removeChunk).
func readDocs(ctx context.Context, tx *database.Tx, ids []int64) ([]searchDoc, error) {
	rows, err := tx.Query(ctx, `SELECT id, datekey, tenant_id, terms FROM search_doc WHERE id IN (`+database.InList(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("read indexed terms: %w", err)
	}
	defer rows.Close()
	var docs []searchDoc
	for rows.Next() {
		var d searchDoc
		var terms string
		if err := rows.Scan(&d.id, &d.datekey, &d.tenant, &terms); err != nil {
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

// removeTerms deletes the docs' search_term rows, removeKeys primary keys to a statement:
// their words (their pairs are in search_doc only).
func removeTerms(ctx context.Context, tx *database.Tx, docs []searchDoc) error {
	args := make([]any, 0, 4*removeKeys)
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, `DELETE FROM search_term WHERE (tenant_id, term, datekey, id) IN (`+database.Rows(len(args)/4, `(?, ?, ?, ?)`)+`)`, args...)
		args = args[:0]
		if err != nil {
			return fmt.Errorf("remove terms: %w", err)
		}
		return nil
	}
	for _, d := range docs {
		for _, t := range d.terms {
			if isPair(t) {
				continue
			}
			if args = append(args, d.tenant, t, d.datekey, d.id); len(args) == 4*removeKeys {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// match requires every word, pair and prefix of q: each word a lookup of (tenant, term,
// m.id) or a range of (tenant, term), whichever the optimizer picks, then each pair in the
// message's search_doc row.
func (x *mysqlIndex) match(q analyzer.Query) (string, []any) {
	words, pairs := splitPairs(q.Terms)
	return x.termConds(words, pairs, q.Prefixes)
}

// textMatches lists the tenant's messages that match text from the index alone, the
// first word's range read and the rest looked up for each of its rows: search_term and
// search_doc hold the visible messages only and are keyed by tenant, so no metadata row
// is read (at 300,000 messages two words' count took 22 ms so, 54 with each message's row).
func (x *mysqlIndex) textMatches(tenant string, text analyzer.Query) (string, []any, bool) {
	return x.matchesIn(tenant, text, ``)
}

// windowMatches lists the tenant's messages that match text with a date key from lo to hi
// (both included) from the index alone: the part of the first word's range in the window,
// the rest looked up for each of its rows, as textMatches. A word with a 30-day window at
// a million messages: counted so 4 ms at p50 and 9 at p99, reading each row's metadata row
// 36 and 103 (docs/performance.md).
func (x *mysqlIndex) windowMatches(tenant string, text analyzer.Query, lo, hi int64) (string, []any, bool) {
	return x.matchesIn(tenant, text, ` AND t.datekey BETWEEN ? AND ?`, lo, hi)
}

// matchesIn is textMatches with cond (on search_term t, with its args) after the first
// word's condition.
func (x *mysqlIndex) matchesIn(tenant string, text analyzer.Query, cond string, condArgs ...any) (string, []any, bool) {
	words, pairs := splitPairs(text.Terms)
	if len(words) == 0 {
		return "", nil, false
	}
	query, args := `SELECT t.id FROM search_term t WHERE t.tenant_id = ? AND t.term = ?`+cond, append([]any{tenant, words[0]}, condArgs...)
	if rest, restArgs := x.termCondsOn("t", words[1:], pairs, text.Prefixes); rest != "" {
		query, args = query+` AND `+rest, append(args, restArgs...)
	}
	return query, args, true
}

// splitPairs returns the words search_term is read for, those of terms and the two of each
// pair, distinct, in order, and the pairs.
func splitPairs(terms []string) (words, pairs []string) {
	seen := make(map[string]bool, len(terms))
	word := func(w string) {
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	for _, t := range terms {
		first, second, ok := strings.Cut(t, analyzer.PairSeparator)
		if !ok {
			word(t)
			continue
		}
		word(first)
		word(second)
		pairs = append(pairs, t)
	}
	return words, pairs
}

// termConds requires words and prefixes from search_term and then pairs from search_doc,
// whose terms are one to a line: a pair is a line of them.
func (x *mysqlIndex) termConds(words, pairs, prefixes []string) (string, []any) {
	return x.termCondsOn("m", words, pairs, prefixes)
}

// termCondsOn is termConds on the table alias t (its id, datekey and tenant_id columns):
// a word is a lookup of the message's key in the word's range.
func (*mysqlIndex) termCondsOn(t string, words, pairs, prefixes []string) (string, []any) {
	conds := make([]string, 0, len(words)+len(pairs)+len(prefixes))
	args := make([]any, 0, len(words)+3*len(pairs)+2*len(prefixes))
	for _, w := range words {
		conds = append(conds, t+`.id IN (SELECT id FROM search_term WHERE tenant_id = `+t+`.tenant_id AND term = ? AND datekey = `+t+`.datekey)`)
		args = append(args, w)
	}
	for _, p := range prefixes {
		conds = append(conds, `(`+t+`.datekey, `+t+`.id) IN (SELECT datekey, id FROM search_term WHERE tenant_id = `+t+`.tenant_id AND term >= ? AND term < ?)`)
		args = append(args, p, analyzer.PrefixEnd(p))
	}
	for _, p := range pairs {
		conds = append(conds, `EXISTS (SELECT 1 FROM search_doc d WHERE d.id = `+t+`.id AND LOCATE(?, CONCAT(?, d.terms, ?)) > 0)`)
		args = append(args, docSeparator+p+docSeparator, docSeparator, docSeparator)
	}
	return strings.Join(conds, " AND "), args
}

// hits counts the tenant's messages that hold the first word (the one driveFrom reads), up
// to max+1: a range of the primary key.
func (x *mysqlIndex) hits(ctx context.Context, r queryer, d database.Dialect, tenant string, text analyzer.Query, max int) (int, error) {
	words, _ := splitPairs(text.Terms)
	if len(words) == 0 {
		return max + 1, nil
	}
	return countHits(ctx, r, d, `SELECT id FROM search_term WHERE tenant_id = ? AND term = ?`, []any{tenant, words[0]}, max)
}

// orderTerms puts the text's words in the order of their estimated hits, fewest first, so
// that the rarest drives (driveFrom, hits) and the others are looked up for its hits: the
// two words of a search are a frequent and a rarer one as often as not, typed in any
// order. The estimate is the optimizer's for a range of the primary key (EXPLAIN, index
// dives, no rows read).
func (*mysqlIndex) orderTerms(ctx context.Context, r queryer, tenant string, text analyzer.Query) (analyzer.Query, error) {
	words, pairs := splitPairs(text.Terms)
	if len(words) < 2 {
		return text, nil
	}
	est := make(map[string]int64, len(words))
	for _, w := range words {
		n, err := explainRows(ctx, r, `EXPLAIN SELECT id FROM search_term WHERE tenant_id = ? AND term = ?`, tenant, w)
		if err != nil {
			return text, err
		}
		est[w] = n
	}
	slices.SortStableFunc(words, func(a, b string) int { return cmp.Compare(est[a], est[b]) })
	return analyzer.Query{Terms: append(words, pairs...), Prefixes: text.Prefixes}, nil
}

// explainRows returns the rows the optimizer expects the first table of query's plan to
// read.
func explainRows(ctx context.Context, r queryer, query string, args ...any) (int64, error) {
	rows, err := r.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("estimate hits: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, fmt.Errorf("estimate hits: %w", err)
	}
	at := slices.Index(cols, "rows")
	if at < 0 || !rows.Next() {
		return 0, fmt.Errorf("estimate hits: no rows estimate in %v", cols)
	}
	vals := make([]sql.NullInt64, len(cols))
	dest := make([]any, len(cols))
	for i := range dest {
		dest[i] = new(sql.RawBytes)
	}
	dest[at] = &vals[at]
	if err := rows.Scan(dest...); err != nil {
		return 0, fmt.Errorf("estimate hits: %w", err)
	}
	return vals[at].Int64, rows.Err()
}

// exactHits: hits counts the tenant's messages holding the first word, which are those
// holding the text when it is that word alone.
func (*mysqlIndex) exactHits(text analyzer.Query) bool {
	return len(text.Terms) == 1 && !isPair(text.Terms[0]) && len(text.Prefixes) == 0
}

// driveCap: a range of the primary key and an InnoDB lookup by primary key a hit, several
// times SQLite's cost a row.
func (*mysqlIndex) driveCap() int { return 20000 }

// driveFrom makes a text search read search_term first, its first word's range newest
// first (driveOrder), each of its messages then looked up in the other words' ranges by its
// key and only then read from metadata: MariaDB's join optimizer, blind to the LIMIT and
// misled by the estimate of a tenant's messages (half the table), otherwise walks the
// messages and looks each one up, five times slower for a word in a third of them. The
// date key is part of the join, so that the bounds of a date window on m.datekey bound the
// range read. The first term drives (a query of prefixes only is left to the optimizer).
func (x *mysqlIndex) driveFrom(q analyzer.Query) (from, cond string, args []any, ok bool) {
	words, pairs := splitPairs(q.Terms)
	if len(words) == 0 {
		return "", "", nil, false
	}
	var b strings.Builder
	b.WriteString(`search_term t`)
	conds, args := []string{`t.term = ?`}, []any{words[0]}
	for i, w := range words[1:] {
		u := fmt.Sprintf("u%d", i+1)
		fmt.Fprintf(&b, ` STRAIGHT_JOIN search_term %[1]s ON %[1]s.tenant_id = t.tenant_id AND %[1]s.datekey = t.datekey AND %[1]s.id = t.id`, u)
		conds, args = append(conds, u+`.term = ?`), append(args, w)
	}
	b.WriteString(` STRAIGHT_JOIN metadata m ON m.tenant_id = t.tenant_id AND m.id = t.id AND m.datekey = t.datekey`)
	if len(pairs) > 0 || len(q.Prefixes) > 0 {
		rest, restArgs := x.termConds(nil, pairs, q.Prefixes)
		conds, args = append(conds, rest), append(args, restArgs...)
	}
	return b.String(), strings.Join(conds, ` AND `), args, true
}

// driveOrder: search_term's range of a word is in page order.
func (*mysqlIndex) driveOrder() string { return `t.datekey DESC, t.id DESC` }

// pagePrefix asks MariaDB (10.6.20, 10.11.10, 11.4.4 and later) to weigh the LIMIT of a
// text search's page when it orders the join: a common word then walks metadata_tenant_datekey_visible
// newest first and stops after a page, a rare one reads its terms and sorts them. The ratio
// is how many times cheaper the walk must look: InnoDB estimates a word's rows about twice
// too high, so with k words the walk looks 2^(k-1) times better than it is. On the
// benchmark archive ratio 1 was best for single words (a word in 5 % of the messages: 8 ms
// against 45 ms without the hint) and 2 for pairs. With a date range the optimizer chooses
// well without it. Since search_term lists a word's messages in page order, a text search
// reaches the plain page only by prefixes alone (driveFrom). The server is asked once
// whether it knows optimizer_join_limit_pref_ratio; MySQL and older MariaDB get no hint.
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

// narrowWalkPage: yes (narrowWalkPager).
func (*mysqlIndex) narrowWalkPage() bool { return true }

// walksAddresses: address_role_addr_date and address_role_domain_date (migration 00025)
// give an address's messages newest first, as on SQLite and PostgreSQL.
func (*mysqlIndex) walksAddresses() bool { return true }
