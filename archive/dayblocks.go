package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// Day blocks let an index keyed by id (SQLite's FTS5, PostgreSQL's GIN) give a common word's hits newest first
// (docs/architecture.md, "Search"). Every message is indexed with one more term per level
// k = 0 … dayBlockLevels-1: the aligned block of 2^k days that holds its date (the day of
// its date key). A search whose words have too many hits to be sorted (more than the
// index's driveCap) walks blocks newest first, each the text AND one block term: a short
// range of days whose hits are few enough to look up and sort, growing by doubling until
// the page (and the count) is full. So a word in 90 % of a million messages reads a few
// days' hits for its first page, not its 900,000. (Keying the index itself by date was
// measured and rejected: docs/performance.md, "The date key in FTS5".)
const (
	dayBlockLevels = 13 // the largest block is 4,096 days (11 years)
	daySeconds     = 86400
)

// dayOfKey is the day (since 1900-01-01 UTC) of a date key.
func dayOfKey(key int64) int64 { return (key >> dateKeyIDBits) / daySeconds }

// dayBlockTerm is the index term of the level-k block numbered block (days block<<k to
// (block+1)<<k - 1). It starts with '_', which no analyzer word or pair does.
func dayBlockTerm(k int, block int64) string {
	return "_d" + strconv.Itoa(k) + "_" + strconv.FormatInt(block, 10)
}

// appendDayBlockTerms appends the block terms of a message with date key key.
func appendDayBlockTerms(terms []string, key int64) []string {
	day := dayOfKey(key)
	for k := range dayBlockLevels {
		terms = append(terms, dayBlockTerm(k, day>>k))
	}
	return terms
}

// dayBlock is one step of a walk: the term of a block and its days [from, to).
type dayBlock struct {
	term     string
	from, to int64
}

// keys are the first and the last date key of b's days. The last second of the key's
// range also holds every later date (dateKeySeconds): a block past it ends with the
// largest key, not at its end, whose key would overflow.
func (b dayBlock) keys() (first, last int64) {
	first = b.from * daySeconds << dateKeyIDBits
	if b.to*daySeconds > dateKeyMaxSec {
		return first, math.MaxInt64
	}
	return first, b.to*daySeconds<<dateKeyIDBits - 1
}

// dayBlocks covers the days lo … hi (inclusive) with aligned blocks, newest first, the
// n-th block at most 2^n days long and none reaching below lo. Each block starts where
// the one before ends, so the walk is exact and at most about 2·dayBlockLevels blocks
// long for any range, plus one per 4,096 days.
func dayBlocks(lo, hi int64, yield func(dayBlock) bool) {
	cur := hi + 1
	for step := 0; cur > lo; step++ {
		k := min(step, dayBlockLevels-1)
		for k > 0 && (cur%(1<<k) != 0 || cur-(1<<k) < lo) {
			k--
		}
		b := dayBlock{term: dayBlockTerm(k, cur>>k-1), from: cur - 1<<k, to: cur}
		cur = b.from
		if !yield(b) {
			return
		}
	}
}

// blockWalk is a text search read block by block: the index that reads it, the words,
// the other conditions (on metadata m) and their arguments, and whether it also counts (a
// count of the words alone is cheaper read from the index in id order: Search does that).
type blockWalk struct {
	index  dayBlockWalker
	text   analyzer.Query
	where  string
	args   []any
	counts bool
	// indexCounts: the index's hits are the search's matches (indexHoldsMatches), or those
	// of them in the date window [from, to) (a zero time is no bound), so the hits of a
	// block inside the window are counted from the index alone where it can
	// (blockHitCounter), no message looked up.
	indexCounts bool
	from, to    time.Time
}

// holds says whether every message block b's term finds lies in the walk's date window, so
// that its hits need no test of it: the block's days begin at or after the window's start
// and end at or before its end. A date key holds the whole seconds of a message's date
// (the microseconds the database keeps are truncated, not rounded), so the block's term
// finds exactly the messages dated in its days, but in the first and the last second of
// the key's range, which also hold the dates before and after it (dateKeySeconds): a
// block of one of those holds only when there is no window.
func (w blockWalk) holds(b dayBlock) bool {
	if w.from.IsZero() && w.to.IsZero() {
		return true
	}
	start, end := b.from*daySeconds, b.to*daySeconds
	if start <= 0 || end > dateKeyMaxSec {
		return false
	}
	return (w.from.IsZero() || !time.Unix(dateKeyEpochSec+start, 0).Before(w.from)) &&
		(w.to.IsZero() || !time.Unix(dateKeyEpochSec+end, 0).After(w.to))
}

// blockHitCounter is a dayBlockWalker that counts the hits of a blockQuery from its index
// alone, up to max+1, without looking a message up.
type blockHitCounter interface {
	blockHits(ctx context.Context, r queryer, blockQuery string, max int) (int, error)
}

// dayBlocksReady says whether every message of the archive has its block terms: those
// archived before the release that added them get theirs from `mailledger reindex`
// (the migration that added them records the highest id then; reindexFinish clears it).
func dayBlocksReady(ctx context.Context, r queryer) (bool, error) {
	var pending int64
	err := r.QueryRowContext(ctx, `SELECT pending_to FROM search_day_blocks`).Scan(&pending)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return pending == 0, err
}

// dayBlocksReady asks w once it has said yes, and never again after.
func (a *Archive) dayBlocksReady(ctx context.Context, r queryer, w dayBlockWalker) (bool, error) {
	if a.blocksReady.Load() {
		return true, nil
	}
	ready, err := w.dayBlocksReady(ctx, r)
	if ready {
		a.blocksReady.Store(true)
	}
	return ready, err
}

// markDayBlocksReady records, at the end of a reindex of every message up to upTo, that
// the messages the block terms were pending for have them now.
func markDayBlocksReady(ctx context.Context, tx *database.Tx, upTo int64) error {
	_, err := tx.Exec(ctx, `UPDATE search_day_blocks SET pending_to = 0 WHERE pending_to <= ?`, upTo)
	return err
}

// dayRange is the range of days a walk for q covers: its date window, narrowed to the
// tenant's oldest and newest message; ok is false when there is none.
func (a *Archive) dayRange(ctx context.Context, r queryer, q Query) (lo, hi int64, ok bool, err error) {
	var minKey, maxKey sql.NullInt64
	err = r.QueryRowContext(ctx, a.db.Rebind(`SELECT (SELECT MIN(datekey) FROM metadata WHERE tenant_id = ?), (SELECT MAX(datekey) FROM metadata WHERE tenant_id = ?)`),
		q.Tenant, q.Tenant).Scan(&minKey, &maxKey)
	if err != nil || !minKey.Valid || !maxKey.Valid {
		return 0, 0, false, err
	}
	lo, hi = dayOfKey(minKey.Int64), dayOfKey(maxKey.Int64)
	if !q.DateFrom.IsZero() {
		lo = max(lo, dateKeySeconds(q.DateFrom)/daySeconds)
	}
	if !q.DateTo.IsZero() {
		hi = min(hi, dateKeySeconds(q.DateTo.Add(-time.Microsecond))/daySeconds)
	}
	return lo, hi, lo <= hi, nil
}

// searchBlocks reads the page of q block by block, and, when w.counts, its total up to
// MaxTotal+1: in one statement where the index counts best so (the date walk of the range
// with the words' hits within its blocks, a short list where the words alone would list
// most of the archive), else block by block along the walk, which then goes on past the
// page until the count is full or the range ends (countsPerBlock). Without a count, a
// block is counted only when the offset has not been passed yet, and only as far as
// needed.
func (a *Archive) searchBlocks(ctx context.Context, r queryer, q Query, w blockWalk) (msgs []Message, total int, err error) {
	lo, hi, ok, err := a.dayRange(ctx, r, q)
	if err != nil || !ok {
		return nil, 0, err
	}
	perBlock := w.counts && w.index.countsPerBlock()
	if w.counts && !perBlock {
		var terms []string
		dayBlocks(lo, hi, func(b dayBlock) bool { terms = append(terms, b.term); return true })
		args := append(append([]any{}, w.args...), w.index.blockQuery(w.text, terms...), MaxTotal+1)
		count := a.db.Rebind(`SELECT COUNT(*) FROM (SELECT 1 AS one FROM metadata m WHERE ` + w.where + ` AND ` + w.index.blockMatch() + ` LIMIT ?) hits`)
		if err := r.QueryRowContext(ctx, count, args...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("count messages: %w", err)
		}
	}
	// Each block's statements also bound the date key to the block's days, which its term
	// already does: PostgreSQL's planner, left without it, may join the hits to a walk of
	// the whole date window (docs/performance.md, "Day blocks").
	fromClause, cond := w.index.blockFrom()
	from := ` FROM ` + fromClause + ` WHERE ` + cond + ` AND m.datekey >= ? AND m.datekey <= ? AND `
	count := a.db.Rebind(`SELECT COUNT(*) FROM (SELECT 1 AS one` + from + w.where + ` LIMIT ?) hits`)
	page := a.db.Rebind(`SELECT ` + messageColumns + from + w.where + ` ORDER BY ` + pageOrder + ` LIMIT ? OFFSET ?`)
	if p, ok := w.index.(narrowBlockPager); ok && p.narrowBlockPage() {
		page = a.db.Rebind(`SELECT ` + messageColumns + ` FROM (SELECT m.id, m.datekey` + from + w.where +
			` ORDER BY ` + pageOrder + ` LIMIT ? OFFSET ?) p CROSS JOIN LATERAL (SELECT * FROM metadata WHERE id = p.id) m ORDER BY ` + pageOrder)
	}
	skip := q.Offset
	dayBlocks(lo, hi, func(b dayBlock) bool {
		want := max(q.Limit-len(msgs), 0) // rows the page still needs
		left := MaxTotal + 1 - total      // rows the count still takes
		if want == 0 && (!perBlock || left <= 0) {
			return false
		}
		bq := w.index.blockQuery(w.text, b.term)
		lo, hi := b.keys()
		args := append([]any{bq, lo, hi}, w.args...)
		countBlock := func(limit int) (n int, err error) {
			if c, ok := w.index.(blockHitCounter); ok && w.indexCounts && w.holds(b) {
				n, err = c.blockHits(ctx, r, bq, limit-1)
			} else {
				err = r.QueryRowContext(ctx, count, append(args, limit)...).Scan(&n)
			}
			if err != nil {
				return 0, fmt.Errorf("count messages: %w", err)
			}
			return n, nil
		}
		if skip == 0 && want > 0 {
			// The page first: a block that does not fill it was counted by it.
			var got []Message
			if got, err = scanRows(r.QueryContext(ctx, page, append(args, want, 0)...)); err != nil {
				return false
			}
			msgs = append(msgs, got...)
			if perBlock {
				n := len(got)
				if n == want && left > n {
					if n, err = countBlock(left); err != nil {
						return false
					}
				}
				total += min(n, max(left, 0))
			}
			return true
		}
		n := skip + want
		if perBlock || skip > 0 {
			limit := skip + want
			if perBlock {
				limit = max(limit, left)
			}
			if n, err = countBlock(limit); err != nil {
				return false
			}
			if perBlock {
				total += min(n, max(left, 0))
			}
		}
		if want == 0 {
			return true
		}
		if n <= skip {
			skip -= n
			return true
		}
		var got []Message
		if got, err = scanRows(r.QueryContext(ctx, page, append(args, want, skip)...)); err != nil {
			return false
		}
		msgs, skip = append(msgs, got...), 0
		return true
	})
	return msgs, total, err
}
