package archive

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestDayBlocksCoverRange: the blocks of any range are aligned, each at most twice the one
// before, none below lo, and together exactly the days lo … hi, newest first.
func TestDayBlocksCoverRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		hi := rng.Int64N(60000)
		lo := hi - rng.Int64N(min(hi+1, 20000))
		next, n := hi+1, 0
		dayBlocks(lo, hi, func(b dayBlock) bool {
			size := b.to - b.from
			require.Equal(t, next, b.to, "blocks of [%d, %d] are contiguous", lo, hi)
			require.GreaterOrEqual(t, b.from, lo)
			require.Zero(t, b.from%size, "block %v aligned", b)
			require.LessOrEqual(t, size, int64(1)<<min(n, dayBlockLevels-1))
			k := 0
			for 1<<k < size {
				k++
			}
			require.Equal(t, dayBlockTerm(k, b.from>>k), b.term)
			require.Contains(t, appendDayBlockTerms(nil, DateKey(time.Unix(dateKeyEpochSec+b.from*daySeconds+3600, 0), 7)), b.term,
				"a message of the block's first day holds its term")
			next, n = b.from, n+1
			return true
		})
		require.Equal(t, lo, next, "blocks of [%d, %d] reach lo", lo, hi)
		require.LessOrEqual(t, n, 2*dayBlockLevels+int((hi-lo)>>(dayBlockLevels-1))+2)
	}
}

// blockFixture is a message of the block-walk tests as the oracle sees it.
type blockFixture struct {
	id     int64
	date   time.Time
	words  map[string]bool
	sender int // s<sender>@x.test
}

// TestSearchDayBlocksMatchOracle: with the drive cap lowered so that the words of a few
// hundred messages are "common", a text search walks the day blocks and gives the
// same pages and totals as an oracle over the generated messages, with offsets, date
// windows, a capped count and messages dated out of order; PostgreSQL walks its blocks
// too, and MySQL answers the same queries its own way and must agree.
func TestSearchDayBlocksMatchOracle(t *testing.T) {
	savedCap, savedPG, savedSort, savedMax := sqliteDriveCap, pgDriveCap, pgSortCap, MaxTotal
	sqliteDriveCap, pgDriveCap, MaxTotal = 5, 5, 150
	defer func() { sqliteDriveCap, pgDriveCap, pgSortCap, MaxTotal = savedCap, savedPG, savedSort, savedMax }()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		arc, _ := newSearchArchive(t, d)
		rng := rand.New(rand.NewPCG(7, 11))
		vocab := []struct {
			word string
			p    float64
		}{{"alpha", 0.9}, {"beta", 0.5}, {"gamma", 0.1}, {"delta", 0.02}}
		base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
		day := 24 * time.Hour
		// Messages with every word just outside the windows below, in blocks the windows'
		// walks count: a count from the index alone there would take them in.
		edges := map[int]time.Time{
			1: time.Date(1850, 6, 1, 0, 0, 0, 0, time.UTC), // before the date key's range: its first second
			2: time.Date(2200, 6, 1, 0, 0, 0, 0, time.UTC), // after it: its last second
			3: base.Add(30*day - time.Hour),                // the morning of a window's first day
			4: base.Add(200*day + time.Hour),               // the afternoon of its last day
		}
		var fixtures []blockFixture
		for batch := range 4 {
			var prepared []*Prepared
			var pending []blockFixture
			for i := range 100 {
				date := base.Add(time.Duration(rng.Int64N(int64(700 * 24 * time.Hour)))).Truncate(time.Second)
				switch {
				case i == 0 && batch == 0:
					date = time.Date(2090, 1, 1, 0, 0, 0, 0, time.UTC) // a spam date far ahead
				case batch == 0 && edges[i] != (time.Time{}):
					date = edges[i]
				case i%17 == 0: // several messages of one second: ids order them
					date = base.Add(100 * 24 * time.Hour)
				}
				words := map[string]bool{}
				var body []string
				for _, v := range vocab {
					if rng.Float64() < v.p || batch == 0 && edges[i] != (time.Time{}) {
						words[v.word] = true
						body = append(body, v.word)
					}
				}
				raw := archivetest.Message(fmt.Sprintf("s%d@x.test", i), []string{"r@y.test"}, nil,
					fmt.Sprintf("m%d-%d", batch, i), strings.Join(append(body, "filler"), " "), date)
				p, err := arc.Prepare(Incoming{Tenant: "default", Raw: raw})
				require.NoError(t, err)
				prepared = append(prepared, p)
				pending = append(pending, blockFixture{date: date, words: words, sender: i})
			}
			res, err := arc.Commit(ctx, prepared)
			require.NoError(t, err)
			for i := range pending {
				pending[i].id = res[i].ID
			}
			fixtures = append(fixtures, pending...)
		}
		// The oracle's order is the page order: date, then id, newest first.
		slices.SortFunc(fixtures, func(a, b blockFixture) int {
			if c := b.date.Compare(a.date); c != 0 {
				return c
			}
			return int(b.id - a.id)
		})
		cases := []Query{
			{Text: "alpha"}, {Text: "alpha", Offset: 7}, {Text: "alpha", Offset: 120, Limit: 30},
			{Text: "beta gamma"}, {Text: "alpha beta", Offset: 40},
			{Text: "alpha", DateFrom: base.Add(30 * day), DateTo: base.Add(60 * day)},
			{Text: "beta", DateFrom: base.Add(100 * day), DateTo: base.Add(100*day + time.Second), Limit: 5},
			{Text: "alpha", DateFrom: base.Add(200 * day)}, {Text: "alpha", DateTo: base.Add(400 * day), Offset: 33},
			{Text: "gamma", DateFrom: base.Add(-time.Hour), DateTo: base.Add(800 * day), Offset: 3, Limit: 4},
			{Text: "alpha", Offset: 500}, {Text: "delta alpha"}, {Text: "alph* beta", Offset: 5},
			// Windows of whole days: every block inside is counted from the index alone.
			{Text: "alpha", DateFrom: midnight(base, 31), DateTo: midnight(base, 95)},
			{Text: "alpha beta", DateFrom: midnight(base, 20), DateTo: midnight(base, 300), Offset: 12},
			{Text: "alpha", DateFrom: midnight(base, 100), DateTo: midnight(base, 101), Limit: 3},
			{Text: "beta", DateTo: time.Date(1900, 1, 2, 0, 0, 0, 0, time.UTC)},
			// A page of one: the blocks after the first are counted, the edges' among them.
			{Text: "delta", DateFrom: base.Add(30 * day), DateTo: base.Add(200 * day), Limit: 1},
			{Text: "gamma", DateFrom: time.Date(1899, 1, 1, 0, 0, 0, 0, time.UTC), DateTo: midnight(base, 100), Limit: 1},
			{Text: "gamma", DateFrom: midnight(base, 100), DateTo: time.Date(2180, 1, 1, 0, 0, 0, 0, time.UTC), Limit: 1},
		}
		// PostgreSQL runs the cases twice: as they come, and after ANALYZE, when its
		// statistics put "alpha" far over the cap and the plan takes the estimate instead
		// of counting (textHits), so the walk also counts a text-only search.
		runs := 1
		if d == database.Postgres {
			runs = 2
		}
		for run := range runs {
			if run == 1 {
				_, err := arc.db.ExecContext(ctx, `ANALYZE message_search`)
				require.NoError(t, err)
				n, _, err := arc.textHits(ctx, arc.db, arc.index.(searchPlanner), "default", mustQuery(t, "alpha"), pgDriveCap, pgDriveCap*listFactor)
				require.NoError(t, err)
				require.Greater(t, n, pgDriveCap*listFactor, "after ANALYZE, alpha's hits are estimated")
			}
			searchMatchesOracle(t, arc, d, cases, fixtures)
		}
		if d == database.Postgres {
			// Texts whose hits are listed (within the drive cap) but past the sort cap are
			// walked too, their totals from the list.
			pgDriveCap, pgSortCap = 150, 5
			searchMatchesOracle(t, arc, d, cases, fixtures)
			q := Query{Tenant: "default", Text: "gamma"}
			st, err := arc.searchStatements(ctx, arc.db, &q)
			require.NoError(t, err)
			assert.True(t, st.blocks != nil && st.totalKnown, "gamma, listed, is walked with its total known")
			pgDriveCap, pgSortCap = 5, savedSort
		}
		assertIndexCounts(t, arc, true)
		assertWindowIndexCounts(t, arc, base, true)

		// Erased messages leave the index in the erasure's transaction, so in an archive of
		// one tenant the index's hits are still the matches: totals and the walk's counts
		// come from the index alone (indexHoldsMatches) and must not count them.
		var erasedSenders []string
		for i := 1; i < 10; i++ {
			erasedSenders = append(erasedSenders, fmt.Sprintf("s%d@x.test", i))
		}
		var zeta [][]byte // a rare word, its count within the drive cap: the plan's count is the total
		for i, from := range []string{"gone@x.test", "kept@x.test", "gone@x.test", "kept@x.test", "gone@x.test"} {
			zeta = append(zeta, archivetest.Message(from, []string{"r@y.test"}, nil, fmt.Sprintf("z%d", i), "zeta", base.Add(time.Duration(i)*time.Hour)))
		}
		commitRaw(t, arc, "default", zeta...)
		n, err := arc.Erase(ctx, EraseRequest{Tenant: "default", RequestID: "GDPR-2026-00042", Addresses: append(erasedSenders, "gone@x.test"), Today: time.Now()})
		require.NoError(t, err)
		fixtures = slices.DeleteFunc(fixtures, func(f blockFixture) bool { return f.sender >= 1 && f.sender < 10 })
		require.Equal(t, 4*100-len(fixtures)+3, n, "erased")
		searchMatchesOracle(t, arc, d, cases, fixtures)
		assertIndexCounts(t, arc, true)
		msgs, total, err := arc.Search(ctx, Query{Tenant: "default", Text: "zeta"})
		require.NoError(t, err)
		assert.Equal(t, 2, total, "the erased messages are not counted")
		assert.Len(t, msgs, 2)

		// Another tenant's mail with the same words: its hits are in the index too, so the
		// counts look each message up again (but where the index is keyed by tenant).
		var other [][]byte
		for i := range 40 {
			other = append(other, archivetest.Message("o@z.test", []string{"r@y.test"}, nil, fmt.Sprintf("o%d", i),
				"alpha beta gamma delta filler", base.Add(time.Duration(i)*24*time.Hour)))
		}
		commitRaw(t, arc, "other", other...)
		searchMatchesOracle(t, arc, d, cases, fixtures)
		assertIndexCounts(t, arc, d == database.MySQL)
		assertWindowIndexCounts(t, arc, base, false)
	})
}

// midnight is the start of the day n days after t's.
func midnight(t time.Time, n int) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day()+n, 0, 0, 0, 0, time.UTC)
}

// assertWindowIndexCounts checks whether a search by text and a date window counts the
// day blocks inside the window from the index alone (where it walks them).
func assertWindowIndexCounts(t *testing.T, arc *Archive, base time.Time, want bool) {
	t.Helper()
	q := Query{Tenant: "default", Text: "alpha", DateFrom: midnight(base, 31), DateTo: midnight(base, 95)}
	st, err := arc.searchStatements(context.Background(), arc.db, &q)
	require.NoError(t, err)
	if st.blocks == nil {
		return // MySQL: no day blocks
	}
	assert.Equal(t, want, st.blocks.indexCounts, "the window's blocks counted from the index alone")
}

func TestBlockWalkHoldsOnlyBlocksInsideTheWindow(t *testing.T) {
	t.Parallel()
	dayOf := func(y int, m time.Month, d int) int64 {
		return dateKeySeconds(time.Date(y, m, d, 0, 0, 0, 0, time.UTC)) / daySeconds
	}
	block := func(from, to int64) dayBlock { return dayBlock{from: from, to: to} }
	march1, april1 := dayOf(2024, 3, 1), dayOf(2024, 4, 1)
	window := blockWalk{from: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), to: time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)}
	assert.True(t, window.holds(block(march1, april1)), "the whole window")
	assert.True(t, window.holds(block(march1+4, march1+8)), "a block within")
	assert.False(t, window.holds(block(march1-1, march1+1)), "a block from the day before")
	assert.False(t, window.holds(block(april1-1, april1+1)), "a block into the day after")

	noon := blockWalk{from: time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC), to: time.Date(2024, 3, 31, 0, 0, 0, 1000, time.UTC)}
	assert.False(t, noon.holds(block(march1, march1+1)), "a window from noon leaves out the morning")
	assert.True(t, noon.holds(block(march1+1, march1+2)))
	assert.True(t, noon.holds(block(april1-2, april1-1)), "a window to just after midnight holds the day before")
	assert.False(t, noon.holds(block(april1-1, april1)))

	assert.True(t, blockWalk{}.holds(block(0, 1)), "without a window every block holds, the clamped ones too")
	from1800 := blockWalk{from: time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC)}
	assert.False(t, from1800.holds(block(0, 1)), "day 0 also holds every date before 1900")
	assert.True(t, from1800.holds(block(1, 2)))
	to2300 := blockWalk{to: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}
	last := int64(dateKeyMaxSec / daySeconds)
	assert.False(t, to2300.holds(block(last, last+1)), "the last second also holds every date after the key's range")
	assert.True(t, to2300.holds(block(last-1, last)))
}

// assertIndexCounts checks whether a search by text alone counts its matches from the
// index alone: the total known from the plan, or the day blocks counted in the index.
func assertIndexCounts(t *testing.T, arc *Archive, want bool) {
	t.Helper()
	q := Query{Tenant: "default", Text: "alpha", Offset: 7}
	st, err := arc.searchStatements(context.Background(), arc.db, &q)
	require.NoError(t, err)
	got := st.totalKnown || st.blocks != nil && st.blocks.indexCounts
	assert.Equal(t, want, got, "alpha counted from the index alone")
}

// searchMatchesOracle runs every case and compares its page and total with the fixtures'.
func searchMatchesOracle(t *testing.T, arc *Archive, d database.Dialect, cases []Query, fixtures []blockFixture) {
	ctx := context.Background()
	for _, q := range cases {
		q.Tenant = "default"
		if q.Limit == 0 {
			q.Limit = 20
		}
		var want []int64
		total := 0
		for _, f := range fixtures {
			if !allWords(f.words, q.Text) || !q.DateFrom.IsZero() && f.date.Before(q.DateFrom) || !q.DateTo.IsZero() && !f.date.Before(q.DateTo) {
				continue
			}
			if total >= q.Offset && len(want) < q.Limit {
				want = append(want, f.id)
			}
			total++
		}
		msgs, gotTotal, err := arc.Search(ctx, q)
		require.NoError(t, err, "%+v", q)
		var got []int64
		for _, m := range msgs {
			got = append(got, m.ID)
		}
		assert.Equal(t, want, got, "page of %q offset %d window %v–%v", q.Text, q.Offset, q.DateFrom, q.DateTo)
		assert.Equal(t, min(total, MaxTotal+1), gotTotal, "total of %q window %v–%v", q.Text, q.DateFrom, q.DateTo)
		if d != database.MySQL && total > 0 {
			st, err := arc.searchStatements(ctx, arc.db, &q)
			require.NoError(t, err)
			if strings.Contains(q.Text, "*") {
				assert.Nil(t, st.blocks, "%q: a prefix is read once, not per block", q.Text)
			} else {
				assert.NotNil(t, st.blocks, "%q over the drive cap walks the day blocks", q.Text)
			}
		}
	}
}

func mustQuery(t *testing.T, text string) analyzer.Query {
	q, err := queryOf(text)
	require.NoError(t, err)
	return q
}

// allWords says whether words hold every word of text, a word ending in * as a prefix.
func allWords(words map[string]bool, text string) bool {
	for _, w := range strings.Fields(text) {
		found := words[w]
		if p, ok := strings.CutSuffix(w, "*"); ok {
			for have := range words {
				found = found || strings.HasPrefix(have, p)
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestDayBlocksWaitForReindex: messages archived before the release that added day blocks
// lack their terms, so the walk waits until `reindex` has rewritten them; the search
// answers the same before and after.
func TestDayBlocksWaitForReindex(t *testing.T) {
	savedCap, savedPG := sqliteDriveCap, pgDriveCap
	sqliteDriveCap, pgDriveCap = 2, 2
	defer func() { sqliteDriveCap, pgDriveCap = savedCap, savedPG }()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		if d == database.MySQL {
			t.Skip("MariaDB's index has no day blocks")
		}
		testDayBlocksWaitForReindex(t, d)
	})
}

func testDayBlocksWaitForReindex(t *testing.T, d database.Dialect) {
	ctx := context.Background()
	arc, _ := newSearchArchive(t, d)
	var batch []*Prepared
	for i := range 8 {
		raw := archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "common", "word", time.Date(2025, 1, 1+i, 0, 0, 0, 0, time.UTC))
		p, err := arc.Prepare(Incoming{Tenant: "default", Raw: raw})
		require.NoError(t, err)
		batch = append(batch, p)
	}
	res, err := arc.Commit(ctx, batch)
	require.NoError(t, err)
	// As an archive of the release before: no block terms, pending up to the last id.
	_, err = arc.db.ExecContext(ctx, `DELETE FROM message_search`)
	require.NoError(t, err)
	insert := `INSERT INTO message_search (rowid, terms) VALUES (?, 'common word')`
	if d == database.Postgres {
		insert = `INSERT INTO message_search (id, document) VALUES (?, 'common word'::tsvector)`
	}
	for _, r := range res {
		_, err = arc.db.ExecContext(ctx, arc.db.Rebind(insert), r.ID)
		require.NoError(t, err)
	}
	_, err = arc.db.ExecContext(ctx, arc.db.Rebind(`UPDATE search_day_blocks SET pending_to = ?`), res[len(res)-1].ID)
	require.NoError(t, err)

	q := Query{Tenant: "default", Text: "common", Limit: 3, Offset: 2}
	st, err := arc.searchStatements(ctx, arc.db, &q)
	require.NoError(t, err)
	assert.Nil(t, st.blocks, "no walk while messages lack their block terms")
	before, total, err := arc.Search(ctx, q)
	require.NoError(t, err)
	assert.Equal(t, 8, total)
	require.Len(t, before, 3)

	_, err = arc.Reindex(ctx, ReindexOptions{})
	require.NoError(t, err)
	st, err = arc.searchStatements(ctx, arc.db, &q)
	require.NoError(t, err)
	assert.NotNil(t, st.blocks, "the walk once reindex has given every message its terms")
	after, total, err := arc.Search(ctx, q)
	require.NoError(t, err)
	assert.Equal(t, 8, total)
	assert.Equal(t, before, after)
}
