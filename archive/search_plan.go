package archive

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// Query selects messages of one tenant. Empty fields do not filter.
type Query struct {
	Tenant   string
	Text     string // full-text words, all required
	From     string // sender address, or @domain
	To       string // recipient (to, cc, bcc or envelope) address, or @domain
	DateFrom time.Time
	DateTo   time.Time // exclusive
	// Participant restricts to messages this address sent or received (plain users).
	Participant string
	// Tag restricts to messages a header check tagged so.
	Tag string
	// Attachments restricts to messages with at least one attachment.
	Attachments bool
	Limit       int
	Offset      int
}

// visible is the condition every read applies: not deleted by purge and not erased (an
// erased message's file waits for purge, but nothing serves it from the moment of erasure).
const visible = `m.deleted = 0 AND m.erased_by IS NULL`

// MaxTotal bounds how far Search counts: counting every match of a common word costs
// more than the page itself. A total of MaxTotal+1 means "more than MaxTotal".
var MaxTotal = 10000

// Search returns one page of matching messages, newest first by message date (the Date
// header, else the arrival; DateKey), and the number of matches, counted up to
// MaxTotal+1. plan chooses which index leads (docs/architecture.md, "Query plans").
func (a *Archive) Search(ctx context.Context, q Query) ([]Message, int, error) {
	var msgs []Message
	var total int
	err := a.searchRead(ctx, func(r queryer) error {
		st, err := a.searchStatements(ctx, r, &q)
		if err != nil {
			return err
		}
		switch {
		case st.totalKnown:
			total = st.total
		case st.blocks == nil || !st.blocks.counts:
			if total, err = a.searchTotal(ctx, r, st); err != nil {
				return err
			}
		}
		if st.blocks != nil {
			var n int
			msgs, n, err = a.searchBlocks(ctx, r, q, *st.blocks)
			if st.blocks.counts {
				total = n
			}
			return err
		}
		msgs, err = scanRows(r.QueryContext(ctx, st.page, st.pageArgs...))
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return msgs, total, a.fillMessages(ctx, msgs)
}

// searchTotal counts the matches up to MaxTotal+1: among the listed hits first, when the
// plan listed them (a count there that reaches MaxTotal+1 is the answer, whatever the hits
// not listed), else, or when some listed hits are not this search's, with the count
// statement.
func (a *Archive) searchTotal(ctx context.Context, r queryer, st searchStatements) (int, error) {
	if st.listedCount != "" {
		var n int
		if err := r.QueryRowContext(ctx, st.listedCount, st.listedCountArgs...).Scan(&n); err != nil {
			return 0, fmt.Errorf("count messages: %w", err)
		}
		if n > MaxTotal {
			return n, nil
		}
	}
	var n int
	if err := r.QueryRowContext(ctx, st.count, st.countArgs...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count messages: %w", err)
	}
	return n, nil
}

// queryer runs a Search's statements: the pool, or the transaction of searchRead.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// searchRead runs the statements of one Search. On PostgreSQL they run in one read-only
// REPEATABLE READ transaction (count and page see one snapshot) that keeps the planner off
// sequential scans: for a word most messages hold, the planner's custom plan reads
// message_search in full and tests every document, which lives in TOAST and costs a read
// each, a cost the planner does not count (a word of 96 % of 100,000 messages: 450 to
// 1,050 ms, against 50 ms through the GIN index; docs/performance.md, "Day blocks").
// Every statement of a search has an index to read instead.
func (a *Archive) searchRead(ctx context.Context, fn func(queryer) error) error {
	if a.db.Dialect != database.Postgres {
		return fn(a.db)
	}
	tx, err := a.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// searchStatements are the two statements of a Search, bound for the database, or the
// block walk that replaces the page (and the count when it counts).
type searchStatements struct {
	count, page         string
	countArgs, pageArgs []any
	blocks              *blockWalk
	// listedCount, when not empty, counts the matches among the listed hits (searchPlan's
	// listed): run first, its answer is the total when it reaches MaxTotal+1.
	listedCount     string
	listedCountArgs []any
	// totalKnown: the plan counted the matches already (searchPlan's total), up to
	// MaxTotal+1; no count statement runs.
	total      int
	totalKnown bool
}

// searchStatements plans q (its Limit defaulted), reading through r, and returns its count
// and page.
func (a *Archive) searchStatements(ctx context.Context, r queryer, q *Query) (searchStatements, error) {
	text, err := queryOf(q.Text)
	if err != nil {
		return searchStatements{}, err
	}
	if q.Limit <= 0 {
		q.Limit = 50
	}
	where, args := a.conditions(*q, text)
	p, err := a.plan(ctx, r, *q, text, where, args)
	if err != nil {
		return searchStatements{}, err
	}
	st := searchStatements{
		count:      a.db.Rebind(`SELECT COUNT(*) FROM (SELECT 1 AS one FROM ` + p.from + ` WHERE ` + p.where + ` LIMIT ?) matches`),
		countArgs:  append(append([]any{}, p.args...), MaxTotal+1),
		blocks:     p.blocks,
		total:      p.total,
		totalKnown: p.totalKnown,
	}
	if p.listed != nil {
		st.listedCount = a.db.Rebind(`SELECT COUNT(*) FROM (SELECT 1 AS one FROM ` + p.listed.from + ` WHERE ` + p.listed.where + ` LIMIT ?) matches`)
		st.listedCountArgs = append(append([]any{}, p.listed.args...), MaxTotal+1)
	}
	if p.drives { // driven from an index, as the count
		st.page = a.db.Rebind(`SELECT ` + messageColumns + ` FROM ` + p.from + ` WHERE ` + p.where + ` ORDER BY ` + p.order + ` LIMIT ? OFFSET ?`)
		st.pageArgs = append(append([]any{}, p.args...), q.Limit, q.Offset)
	} else {
		from := `metadata m`
		if n, ok := a.index.(narrowWalkPager); ok && n.narrowWalkPage() {
			st.page = a.db.Rebind(p.prefix + `SELECT ` + messageColumns + ` FROM (SELECT m.id, m.datekey FROM ` + from + ` WHERE ` + where +
				` ORDER BY ` + pageOrder + ` LIMIT ? OFFSET ?) p STRAIGHT_JOIN metadata m ON m.id = p.id ORDER BY p.datekey DESC`)
		} else {
			st.page = a.db.Rebind(p.prefix + `SELECT ` + messageColumns + ` FROM ` + from + ` WHERE ` + where + ` ORDER BY ` + pageOrder + ` LIMIT ? OFFSET ?`)
		}
		st.pageArgs = append(append([]any{}, args...), q.Limit, q.Offset)
	}
	return st, nil
}

// pageOrder is the order of every page: newest first by date, then by id (DateKey).
const pageOrder = `m.datekey DESC`

// searchPlanner is a searchIndex that helps its dialect's optimizer with the statements of
// a text search: it can count its hits cheaply and drive a statement from them, and give
// the page a hint (MySQL: the join optimizer does not weigh LIMIT, and its estimates make
// it walk the tenant's messages).
type searchPlanner interface {
	// hits counts the messages the index finds for text, of tenant or of every tenant,
	// up to max+1; it reads the index only, through r.
	hits(ctx context.Context, r queryer, d database.Dialect, tenant string, text analyzer.Query, max int) (int, error)
	// driveCap is the most hits a statement is driven from: past it, sorting the hits
	// costs more than walking the date index.
	driveCap() int
	// driveFrom returns a FROM clause that reads the index before metadata m, and the text
	// condition to use with it instead of match's; ok is false when the words give it
	// nothing to read.
	driveFrom(text analyzer.Query) (from, cond string, args []any, ok bool)
	// pagePrefix returns what goes before the SELECT of the page ("" for nothing).
	pagePrefix(ctx context.Context, db *database.DB, text analyzer.Query) string
	// walksAddresses says whether address_role has indexes that give an address's or a
	// domain's messages in page order (address_role_addr_date, address_role_domain_date).
	walksAddresses() bool
}

// dayBlockWalker is a searchPlanner whose index holds day blocks (dayblocks.go): a text
// search with more hits than driveCap walks them newest first when every message has its
// block terms.
type dayBlockWalker interface {
	// dayBlocksReady says whether every message of the archive has its block terms.
	dayBlocksReady(ctx context.Context, r queryer) (bool, error)
	// blockFrom returns a FROM clause that reads the index's hits before metadata m, and
	// the condition that goes with it; the one argument of the pair is blockQuery's.
	blockFrom() (from, cond string)
	// blockQuery is the index query of text's words and any of the block terms.
	blockQuery(text analyzer.Query, terms ...string) string
	// blockMatch is a condition on metadata m's id: among the hits of blockQuery, its one
	// argument.
	blockMatch() string
	// countsPerBlock says whether a walk that counts does so block by block rather than
	// in one statement with blockMatch (searchBlocks).
	countsPerBlock() bool
}

// narrowWalkPager is a searchPlanner whose plain page (the walk of the date index, no
// driver) is best read in two steps: the page's ids from the walk of
// metadata_tenant_datekey_visible alone, which holds what the walk tests of each message,
// then only the page's rows. MariaDB otherwise reads the row of every message it walks:
// a common word at offset 5,000 in a million messages took 106 to 120 ms so, 50 to 59 in
// two steps.
type narrowWalkPager interface {
	narrowWalkPage() bool
}

// narrowBlockPager is a dayBlockWalker whose block page is best read in two steps: the
// page's ids sorted from the hits' id and date key alone (from an index that carries both),
// then only the page's rows (searchBlocks). SQLite reads a message's row by its rowid
// either way and does not need it.
type narrowBlockPager interface {
	narrowBlockPage() bool
}

// searchPlan is how Search reads: the FROM clause, conditions and arguments of its count,
// and for its page the same with order (drives: the search is driven from an index) or
// the plain page over metadata m with prefix (an optimizer hint) before it.
type searchPlan struct {
	plannedDriver
	drives bool
	prefix string
	blocks *blockWalk
	// listed, when the text's hits were listed and more than the drive cap and the text
	// is the only condition, reads the listed ones (a hitLister's listFrom): a count of
	// them that reaches MaxTotal+1 is the search's total (in an archive of one tenant, as
	// good as always; else the total is counted from the index after it).
	listed *plannedDriver
	// total is the number of matches up to MaxTotal+1 when totalKnown: the index's count
	// of the text's hits, for a search by text alone whose hits are all its matches
	// (indexHoldsMatches).
	total      int
	totalKnown bool
}

// plannedDriver is a FROM clause that reads an index before metadata m, with the WHERE
// conditions and arguments that go with it, and the page order in its terms.
type plannedDriver struct {
	from, where string
	args        []any
	order       string
}

// walksAddresses says whether the archive's address conditions can drive a search in page
// order (SQLite): each then walks its messages newest first and stops after the page, and
// the others are tested per message by primary key.
func (a *Archive) walksAddresses() bool {
	p, ok := a.index.(searchPlanner)
	return ok && p.walksAddresses()
}

// plan chooses how Search reads. The drivers are the text's index hits and the
// address_role rows of from=, to= and the participant, each counted up to the index's
// driveCap (an index range, no table). A driver's hits are looked up and sorted, so one
// within driveCap leads, the fewest; where addresses are walked in page order
// (walksAddresses) an address leads whatever its count, when it has the fewest hits or
// when nothing else is within the cap. Without a driver the database walks the date index
// (a text search with at most a participant besides still counts from the text's hits).
func (a *Archive) plan(ctx context.Context, r queryer, q Query, text analyzer.Query, where string, args []any) (searchPlan, error) {
	plain := searchPlan{plannedDriver: plannedDriver{`metadata m`, where, args, pageOrder}}
	p, ok := a.index.(searchPlanner)
	if !ok {
		return plain, nil
	}
	if o, ok := p.(termOrderer); ok && !text.Empty() {
		var err error
		if text, err = o.orderTerms(ctx, r, q.Tenant, text); err != nil {
			return plain, err
		}
	}
	limit, walks := p.driveCap(), p.walksAddresses()
	best, bestN := -1, 0
	var drivers []plannedDriver
	consider := func(d plannedDriver, n int, ordered bool) {
		if (n <= limit || ordered) && (best < 0 || n < bestN) {
			best, bestN = len(drivers), n
		}
		drivers = append(drivers, d)
	}
	var textDriver, listed *plannedDriver
	var common bool // the text's hits were estimated, not counted: far more than the cap
	var restWhere string
	var restArgs []any
	var total int
	var totalKnown, indexCounts, windowCounts bool
	if !text.Empty() {
		if driveFrom, cond, condArgs, ok := p.driveFrom(text); ok {
			restWhere, restArgs = a.conditions(q, analyzer.Query{})
			d := plannedDriver{driveFrom, cond + ` AND ` + restWhere, append(condArgs, restArgs...), pageOrder}
			far := limit * commonFactor
			if _, lists := p.(hitLister); lists && q.textAlone() {
				far = limit * listFactor
			}
			// Hits read in page order drive whatever their number when nothing else could
			// lead: they are not counted for the plan.
			_, ordered := p.(orderedTextDriver)
			counted := !ordered || len(roleSources(q)) > 0
			var n int
			var ids []int64
			var err error
			if counted {
				if n, ids, err = a.textHits(ctx, r, p, q.Tenant, text, limit, far); err != nil {
					return plain, fmt.Errorf("count index hits: %w", err)
				}
			}
			common = n > limit*commonFactor
			textDriver = &d
			if q.textAlone() {
				if indexCounts, err = a.indexHoldsMatches(ctx, r, p, q.Tenant, text); err != nil {
					return plain, err
				}
				// n is an exact count of the hits up to limit+1, or an estimate (common).
				if indexCounts && counted && !common && (n <= limit || limit >= MaxTotal) {
					total, totalKnown = min(n, MaxTotal+1), true
				}
				if m, ok := p.(textMatchLister); ok && !totalKnown {
					if stmt, stmtArgs, ok := m.textMatches(q.Tenant, text); ok {
						if total, err = countHits(ctx, r, a.db.Dialect, stmt, stmtArgs, MaxTotal); err != nil {
							return plain, fmt.Errorf("count matches: %w", err)
						}
						totalKnown = true
					}
				}
			}
			if q.textInWindow() { // a day block inside the window is counted from the index
				if windowCounts, err = a.indexHoldsMatches(ctx, r, p, q.Tenant, text); err != nil {
					return plain, err
				}
				if w, ok := p.(windowMatchLister); ok {
					if lo, hi, exact := exactDateKeyBounds(q.DateFrom, q.DateTo); exact {
						if stmt, stmtArgs, ok := w.windowMatches(q.Tenant, text, lo, hi); ok {
							if total, err = countHits(ctx, r, a.db.Dialect, stmt, stmtArgs, MaxTotal); err != nil {
								return plain, fmt.Errorf("count matches: %w", err)
							}
							totalKnown = true
						}
					}
				}
			}
			if l, ok := p.(hitLister); ok && ids != nil {
				from, listArgs := l.listFrom(ids)
				listed = &plannedDriver{from, restWhere, append(listArgs, restArgs...), pageOrder}
			}
			// The hits a page driven from them would look up and sort; with no address to
			// lead instead, past the sort cap the walk reads the page.
			sorted := n
			if s, ok := p.(pageSorter); ok && n > s.sortCap() && len(text.Prefixes) == 0 && len(roleSources(q)) == 0 {
				if w, ok := a.index.(dayBlockWalker); ok {
					ready, err := a.dayBlocksReady(ctx, r, w)
					if err != nil {
						return plain, fmt.Errorf("day blocks: %w", err)
					}
					if ready { // the walk reads the page in order: not a driver
						sorted = limit + 1
					}
				}
			}
			switch o, ordered := p.(orderedTextDriver); {
			case ordered: // read in page order, it stops after the page: no sort to bound
				d.order = o.driveOrder()
				consider(d, sorted, true)
			case listed != nil && n <= limit:
				consider(*listed, sorted, false)
			default:
				consider(d, sorted, false)
			}
		}
		plain.prefix = p.pagePrefix(ctx, a.db, text)
	}
	for _, src := range roleSources(q) {
		n, err := countHits(ctx, r, a.db.Dialect, src.sql, src.args, limit)
		if err != nil {
			return plain, fmt.Errorf("count address hits: %w", err)
		}
		if q.addressAlone() {
			if total, totalKnown, err = a.addressTotal(ctx, r, q.Tenant, src, n, limit); err != nil {
				return plain, err
			}
		}
		if walks { // the walk is the condition: the others are tested on each message
			rest, restArgs := a.conditions(src.without(q), text)
			consider(plannedDriver{a.walkFrom(), src.ordered + ` AND ` + rest,
				append(append([]any{}, src.orderedArgs...), restArgs...), `h.datekey DESC`}, n, true)
		} else {
			consider(plannedDriver{a.drivenFrom(src.sql), where, append(append([]any{}, src.args...), args...), pageOrder}, n, false)
		}
	}
	plain.total, plain.totalKnown = total, totalKnown
	if best >= 0 {
		return searchPlan{plannedDriver: drivers[best], drives: true, total: total, totalKnown: totalKnown}, nil
	}
	if textDriver != nil && q.textOnly() {
		plain.plannedDriver = plannedDriver{textDriver.from, textDriver.where, textDriver.args, pageOrder}
	}
	if q.textAlone() { // with other conditions, few of the listed would match: no shortcut
		plain.listed = listed
	}
	// A prefix is left to the plain page: FTS5 merges every term it covers again for each
	// block it is read with.
	if w, ok := a.index.(dayBlockWalker); ok && textDriver != nil && len(text.Prefixes) == 0 {
		ready, err := a.dayBlocksReady(ctx, r, w)
		if err != nil {
			return plain, fmt.Errorf("day blocks: %w", err)
		}
		if ready {
			plain.blocks = &blockWalk{index: w, text: text, where: restWhere, args: restArgs, counts: !q.textOnly() || common,
				indexCounts: indexCounts || windowCounts, from: q.DateFrom, to: q.DateTo}
		}
	}
	return plain, nil
}

// textMatchLister is a searchPlanner whose index alone tells a search by text alone its
// matches (MySQL: search_term is keyed by tenant and holds visible messages only): a
// statement that lists them, ok false when the text gives it nothing to read.
type textMatchLister interface {
	textMatches(tenant string, text analyzer.Query) (stmt string, args []any, ok bool)
}

// windowMatchLister is a searchPlanner whose index alone tells a search by text and a date
// window its matches (MySQL: search_term is keyed by tenant and date key after the term,
// and holds visible messages only): a statement that lists those whose date key is from lo
// to hi, both included (exactDateKeyBounds), ok false when the text gives it nothing to read.
type windowMatchLister interface {
	windowMatches(tenant string, text analyzer.Query, lo, hi int64) (stmt string, args []any, ok bool)
}

// orderedTextDriver is a searchPlanner whose text driver (driveFrom) reads its hits in
// page order (MySQL: search_term is keyed by date key after the term): it leads like an
// address walked in page order, and driveOrder is its page's ORDER BY.
type orderedTextDriver interface {
	driveOrder() string
}

// termOrderer is a searchPlanner whose driveFrom and hits read the text's first word: it
// puts the word with the fewest hits first.
type termOrderer interface {
	orderTerms(ctx context.Context, r queryer, tenant string, text analyzer.Query) (analyzer.Query, error)
}

// pageSorter is a searchPlanner whose text hits, past sortCap of them, are read for a page
// more cheaply by the day-block walk than looked up and sorted, although there are fewer
// than the drive cap, which on PostgreSQL is also how many hits are listed for the total
// (hitLister): a list of 9,000 hits looked up in metadata by primary key and sorted took
// 50 ms at a million messages where the walk reads a few days' blocks (docs/performance.md).
type pageSorter interface {
	sortCap() int
}

// hitEstimator is a searchPlanner whose database can estimate a text's hits from its
// statistics, far cheaper than counting them where the index cannot stop early
// (PostgreSQL's GIN reads every hit of a word before the first is returned).
type hitEstimator interface {
	estimateHits(ctx context.Context, r queryer, text analyzer.Query) (int, error)
}

// commonFactor: a text estimated at more than commonFactor times the drive cap is taken
// as far beyond it, uncounted. An estimate errs (a word without statistics is guessed at
// 0.5 % of the messages); beyond this factor the error would have to be large.
const commonFactor = 4

// listFactor replaces commonFactor for a search by text alone where the index lists its
// hits (hitLister): the list's cost follows the rarest word's hits (GIN reads them into a
// bitmap, and then the heap rows of at most the cap and one, in the order of the table,
// dense where the text is common) and gives the total, where counting up to the cap
// along the day-block walk reads one heap page a hit, in the order of the dates. Two words
// of 47,000 hits at a million messages: listed in 67 ms, counted along the walk in 112
// (docs/performance.md, "PostgreSQL: many hits walked, not sorted").
const listFactor = 20

// hitLister is a searchPlanner that lists its hits' ids as cheaply as it counts them, and
// drives a statement from such a list. PostgreSQL: GIN reads every hit of each word into a
// bitmap and then each hit's row, whether the hits are counted or listed, so a search
// whose hits were counted read them three times (the count of hits, the total, the page);
// listed once, the total and the page look the listed messages up by primary key.
type hitLister interface {
	// listHits lists the ids of the messages the index finds for text, of every tenant,
	// at most max+1 of them (nil for none: the plan then reads the index, which finds
	// nothing at once).
	listHits(ctx context.Context, r queryer, text analyzer.Query, max int) ([]int64, error)
	// listFrom returns a FROM clause that reads ids before metadata m, and its arguments.
	listFrom(ids []int64) (from string, args []any)
}

// textHits counts the index's hits of text up to limit+1 (and lists them, where the index
// is a hitLister), or, where the index estimates more than far (commonFactor or listFactor
// times limit), returns the estimate (Search then counts along the day-block walk: a common word's
// count up to MaxTotal is found in its newest days).
func (a *Archive) textHits(ctx context.Context, r queryer, p searchPlanner, tenant string, text analyzer.Query, limit, far int) (int, []int64, error) {
	if e, ok := p.(hitEstimator); ok {
		n, err := e.estimateHits(ctx, r, text)
		if err != nil {
			return 0, nil, err
		}
		if n > far {
			return n, nil, nil
		}
	}
	if l, ok := p.(hitLister); ok {
		ids, err := l.listHits(ctx, r, text, limit)
		return len(ids), ids, err
	}
	n, err := p.hits(ctx, r, a.db.Dialect, tenant, text, limit)
	return n, nil, err
}

// tenantHitsCounter is a searchPlanner whose hits (its hits and listHits) are the searched
// tenant's only: MySQL's search_term is keyed by tenant. Its exactHits says whether hits
// counts the messages holding the whole text (MySQL counts its first term's).
type tenantHitsCounter interface {
	exactHits(text analyzer.Query) bool
}

// indexHoldsMatches says whether the index's hits for text are exactly the matches of a
// search of tenant by text alone, so that their count is the search's total and no
// message needs to be looked up for it. The full-text index holds visible messages only:
// a commit adds a message's row with its metadata, and erasure (markErased) and purge
// (purgeMessages) take it out in the transaction that hides the message; reindex writes
// only visible ones. So the hits are matches when they are all the tenant's: always where
// the index is keyed by tenant, else when the archive holds no other tenant's mail.
func (a *Archive) indexHoldsMatches(ctx context.Context, r queryer, p searchPlanner, tenant string, text analyzer.Query) (bool, error) {
	if t, ok := p.(tenantHitsCounter); ok {
		return t.exactHits(text), nil
	}
	return onlyTenant(ctx, r, tenant)
}

// onlyTenant says whether every message of the archive, in any state, is tenant's: two
// probes of an index that leads with tenant_id.
func onlyTenant(ctx context.Context, r queryer, tenant string) (bool, error) {
	var lo, hi sql.NullString
	err := r.QueryRowContext(ctx, `SELECT (SELECT MIN(tenant_id) FROM metadata), (SELECT MAX(tenant_id) FROM metadata)`).Scan(&lo, &hi)
	if err != nil {
		return false, fmt.Errorf("tenants of the archive: %w", err)
	}
	return lo.Valid && lo.String == tenant && hi.String == tenant, nil
}

// maxErasedScan bounds the erased messages addressTotal reads to find those among an
// address's hits; past it the search counts its matches by looking each hit up.
const maxErasedScan = 10000

// addressTotal returns the total of a search by one address condition alone (src, whose
// hits, the distinct messages of its address_role rows, the plan counted up to limit+1)
// without looking each hit up, when the archive holds no other tenant's mail. address_role
// holds the roles of visible and of erased messages only: purge removes those of the
// messages it deletes, but of erased ones (whose files may come back from a backup, when
// a legal hold must still find them: ReturnedFiles). So the matches are the hits less the
// erased messages among them, found from the erased messages' side (metadata_erased_by),
// a handful where the hits can be a fifth of the archive. ok is false where that does not
// hold or the count would not be exact: Search then counts as before.
func (a *Archive) addressTotal(ctx context.Context, r queryer, tenant string, src hitSource, hits, limit int) (total int, ok bool, err error) {
	if limit < MaxTotal {
		return 0, false, nil
	}
	if one, err := onlyTenant(ctx, r, tenant); err != nil || !one {
		return 0, false, err
	}
	var scanned, erased int
	q := `SELECT COUNT(*), COALESCE(SUM(hit), 0) FROM (SELECT CASE WHEN ` + src.test + ` THEN 1 ELSE 0 END AS hit
		FROM metadata m WHERE m.erased_by IS NOT NULL LIMIT ?) e`
	if err := r.QueryRowContext(ctx, a.db.Rebind(q), append(append([]any{}, src.testArgs...), maxErasedScan+1)...).Scan(&scanned, &erased); err != nil {
		return 0, false, fmt.Errorf("erased messages among the hits: %w", err)
	}
	switch {
	case scanned > maxErasedScan:
		return 0, false, nil
	case hits <= limit: // every hit counted
		return min(hits-erased, MaxTotal+1), true, nil
	case limit+1-erased > MaxTotal: // more matches than MaxTotal whatever the hits not counted
		return MaxTotal + 1, true, nil
	}
	return 0, false, nil
}

// hitSource is an address condition read from address_role alone: sql selects the
// distinct ids of its messages; ordered is a condition on address_role h that takes one row
// per message, for a walk of h newest first along SQLite's address_role_addr_date or
// address_role_domain_date (a condition SQLite can flatten into the page's join: a
// DISTINCT or UNION subquery would make it sort every hit again). Where a message may have
// several rows of the walk (a domain's addresses, an address's roles), ordered keeps its
// first by a NOT EXISTS that seeks the walked index itself, next to the row being read
// (the message's date key and id lead to it), rather than the primary key: 15 to 25 % off
// a to=@domain search at a million messages (docs/performance.md).
type hitSource struct {
	sql         string
	args        []any
	ordered     string
	orderedArgs []any
	// test is the condition on one message m, a lookup of address_role's primary key: the
	// form SQLite checks best while it walks another index.
	test     string
	testArgs []any
	// without is a query without this condition.
	without func(Query) Query
}

// roleSources are the address conditions of q as hit sources: from=, to= and the
// participant.
func roleSources(q Query) []hitSource {
	var out []hitSource
	if q.From != "" {
		h := roleHits(analyzer.Sender, q.From)
		h.without = func(q Query) Query { q.From = ""; return q }
		out = append(out, h)
	}
	if q.To != "" {
		h := roleHits(analyzer.Recipient, q.To)
		h.without = func(q Query) Query { q.To = ""; return q }
		out = append(out, h)
	}
	if q.Participant != "" {
		h := participantHits(q.Participant)
		h.without = func(q Query) Query { q.Participant = ""; return q }
		out = append(out, h)
	}
	return out
}

// roleHits selects the messages of a from= or to= filter: those where value, an address
// or @domain, has role by the address rule. A message holds one row per (role, address),
// so only a domain needs DISTINCT.
func roleHits(role analyzer.Role, value string) hitSource {
	if dom, ok := strings.CutPrefix(strings.TrimSpace(value), "@"); ok {
		args := []any{domainKey(dom), int(role)}
		return hitSource{
			sql: `SELECT DISTINCT id FROM address_role WHERE domain = ? AND role = ?`, args: args,
			ordered:     `h.domain = ? AND h.role = ? AND NOT EXISTS (SELECT 1 FROM address_role d WHERE d.domain = h.domain AND d.datekey = h.datekey AND d.role = h.role AND d.id = h.id AND d.addr < h.addr)`,
			orderedArgs: args,
			test:        `EXISTS (SELECT 1 FROM address_role r WHERE r.id = m.id AND r.role = ? AND r.domain = ?)`, testArgs: []any{int(role), args[0]},
		}
	}
	args := []any{addressKey(value), int(role)}
	return hitSource{
		sql: `SELECT id FROM address_role WHERE addr = ? AND role = ?`, args: args,
		ordered: `h.addr = ? AND h.role = ?`, orderedArgs: args,
		test: `EXISTS (SELECT 1 FROM address_role r WHERE r.id = m.id AND r.role = ? AND r.addr = ?)`, testArgs: []any{int(role), args[0]},
	}
}

// participantHits selects the messages an address sent or received, in either role.
func participantHits(addr string) hitSource {
	args := []any{addressKey(addr)}
	return hitSource{
		sql: `SELECT DISTINCT id FROM address_role WHERE addr = ?`, args: args,
		ordered:     `h.addr = ? AND NOT EXISTS (SELECT 1 FROM address_role d WHERE d.addr = h.addr AND d.datekey = h.datekey AND d.id = h.id AND d.role < h.role)`,
		orderedArgs: args,
		test:        `EXISTS (SELECT 1 FROM address_role r WHERE r.id = m.id AND r.addr = ?)`, testArgs: args,
	}
}

// walkFrom joins metadata m to address_role h walked in page order: SQLite keeps a CROSS
// JOIN in the order written, MariaDB a STRAIGHT_JOIN; PostgreSQL has no CROSS JOIN … ON,
// and its planner walks h's date index for the page's ORDER BY and LIMIT by itself.
func (a *Archive) walkFrom() string {
	switch a.db.Dialect {
	case database.Postgres:
		return `address_role h JOIN metadata m ON m.id = h.id`
	case database.MySQL:
		return `address_role h STRAIGHT_JOIN metadata m ON m.id = h.id`
	}
	return `address_role h CROSS JOIN metadata m ON m.id = h.id`
}

// drivenFrom joins metadata m to the ids of hits (a query of distinct ids), read first and
// looked up by primary key, in the form each dialect keeps to that order.
func (a *Archive) drivenFrom(hits string) string {
	switch a.db.Dialect {
	case database.Postgres:
		return `(` + hits + ` OFFSET 0) h CROSS JOIN LATERAL (SELECT * FROM metadata WHERE id = h.id) m`
	case database.MySQL:
		return `(` + hits + `) h STRAIGHT_JOIN metadata m ON m.id = h.id`
	}
	return `(` + hits + `) h CROSS JOIN metadata m ON m.id = h.id`
}

// addressAlone says whether q selects by one address condition (from= or to=) only.
func (q Query) addressAlone() bool {
	return (q.From == "") != (q.To == "") && q.Text == "" && q.Participant == "" && q.Tag == "" && !q.Attachments &&
		q.DateFrom.IsZero() && q.DateTo.IsZero()
}

// textAlone says whether q selects by text only.
func (q Query) textAlone() bool { return q.textOnly() && q.Participant == "" && !q.Attachments }

// textInWindow says whether q selects by text and a date window only.
func (q Query) textInWindow() bool {
	return q.Text != "" && q.From == "" && q.To == "" && q.Tag == "" && q.Participant == "" && !q.Attachments &&
		(!q.DateFrom.IsZero() || !q.DateTo.IsZero())
}

// textOnly says whether q selects by text and participant only.
func (q Query) textOnly() bool {
	return q.Text != "" && q.From == "" && q.To == "" && q.Tag == "" && q.DateFrom.IsZero() && q.DateTo.IsZero()
}

// conditions returns the WHERE conditions of q, with text as its text condition (none when
// text is empty).
func (a *Archive) conditions(q Query, text analyzer.Query) (string, []any) {
	conds := []string{visible, `m.tenant_id = ?`}
	args := []any{q.Tenant}
	add := func(c string, a ...any) { conds = append(conds, c); args = append(args, a...) }
	if !text.Empty() {
		c, a := a.index.match(text)
		add(c, a...)
	}
	addressCond := func(r hitSource) {
		if a.walksAddresses() {
			add(r.test, r.testArgs...)
		} else {
			add(`m.id IN (`+r.sql+`)`, r.args...)
		}
	}
	if q.From != "" {
		addressCond(roleHits(analyzer.Sender, q.From))
	}
	if q.To != "" {
		addressCond(roleHits(analyzer.Recipient, q.To))
	}
	lo, hi, hasLo, hasHi := dateKeyBounds(q.DateFrom, q.DateTo)
	if hasLo { // the date key's range for the indexes, msgdate for the exact bound
		add(`m.datekey >= ? AND m.msgdate >= ?`, lo, database.TimeArg(a.db.Dialect, q.DateFrom))
	}
	if hasHi {
		add(`m.datekey < ?`, hi)
	}
	if !q.DateTo.IsZero() {
		add(`m.msgdate < ?`, database.TimeArg(a.db.Dialect, q.DateTo))
	}
	if q.Participant != "" {
		addressCond(participantHits(q.Participant))
	}
	if q.Tag != "" {
		add(tagCondition, q.Tag)
	}
	if q.Attachments {
		add(`m.attachments > 0`)
	}
	return strings.Join(conds, " AND "), args
}

// participantCondition restricts to the messages an address (its key, addressKey) sent or
// received by the address rule: what a plain user sees is what an erasure of their
// address would delete (docs/address-rule.md). Search uses participantHits.
const participantCondition = `m.id IN (SELECT id FROM address_role WHERE addr = ?)`

// addressKey is the match key of an address (analyzer.Normalize); one the rule refuses is
// kept lower-cased, and matches no key.
func addressKey(addr string) string {
	if key, err := analyzer.Normalize(addr); err == nil {
		return key
	}
	return strings.ToLower(strings.TrimSpace(addr))
}

// domainKey is addressKey's counterpart for a domain (analyzer.NormalizeDomain).
func domainKey(domain string) string {
	if key, err := analyzer.NormalizeDomain(domain); err == nil {
		return key
	}
	return strings.ToLower(strings.TrimSpace(domain))
}
