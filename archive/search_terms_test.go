package archive

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/migrations"
)

// newSearchArchive returns an archive on a fresh database of dialect d.
func newSearchArchive(t *testing.T, d database.Dialect) (*Archive, *database.DB) {
	t.Helper()
	dir := t.TempDir()
	blobs, err := NewLocalStore(filepath.Join(dir, "store"))
	require.NoError(t, err)
	keys, err := LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	require.NoError(t, err)
	db := dbtest.Open(t, d)
	arc, err := New(db, blobs, keys, Options{})
	require.NoError(t, err)
	return arc, db
}

// onMySQL runs fn on a fresh archive on MariaDB only: the other dialects' runs skip, for
// the reason why.
func onMySQL(t *testing.T, why string, fn func(t *testing.T, arc *Archive, db *database.DB)) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		if d != database.MySQL {
			t.Skip(why)
		}
		arc, db := newSearchArchive(t, d)
		fn(t, arc, db)
	})
}

func commitRaw(t *testing.T, arc *Archive, tenant string, raws ...[]byte) []Result {
	t.Helper()
	var batch []*Prepared
	for _, raw := range raws {
		p, err := arc.Prepare(Incoming{Tenant: tenant, Raw: raw})
		require.NoError(t, err)
		batch = append(batch, p)
	}
	res, err := arc.Commit(context.Background(), batch)
	require.NoError(t, err)
	return res
}

// searchIDs runs q and returns the ids of the page, checking that the count agrees.
func searchIDs(t *testing.T, arc *Archive, q Query) []int64 {
	t.Helper()
	msgs, total, err := arc.Search(context.Background(), q)
	require.NoError(t, err, "%+v", q)
	ids := []int64{}
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	assert.Equal(t, len(ids), total, "count of %+v", q)
	return ids
}

// TestSearchAfterRemoveFromIndex: a message taken out of the index (erasure, purge) is no
// longer found by its words, and the others still are.
func TestSearchAfterRemoveFromIndex(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		arc, db := newSearchArchive(t, d)
		day := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
		res := commitRaw(t, arc, "default",
			archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "harbour plans", "first draft", day),
			archivetest.Message("c@x.test", []string{"b@y.test"}, nil, "harbour budget", "second draft", day.AddDate(0, 0, 1)),
		)
		require.ElementsMatch(t, []int64{res[0].ID, res[1].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: "harbour"}))
		require.NoError(t, db.InTx(context.Background(), func(tx *database.Tx) error {
			return arc.RemoveFromIndex(context.Background(), tx, res[0].ID)
		}))
		assert.Equal(t, []int64{}, searchIDs(t, arc, Query{Tenant: "default", Text: "plans"}))
		assert.Equal(t, []int64{res[1].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: "harbour draft"}))
	})
}

// TestIndexChunks: a commit whose terms exceed one INSERT's rows and bytes is indexed
// whole, and each message's last term is found.
func TestIndexChunks(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		arc, db := newSearchArchive(t, d)
		// 900 distinct words of 120 bytes a message, six messages: 5,400 words, past
		// termChunk rows and (with their pairs) termChunkBytes and indexChunkBytes.
		const perMessage, messages = 900, 6
		word := func(m, i int) string { return fmt.Sprintf("%s%dx%04d", strings.Repeat("w", 110), m, i) }
		var raws [][]byte
		for m := range messages {
			var body strings.Builder
			for i := range perMessage {
				body.WriteString(word(m, i))
				body.WriteString("\r\n")
			}
			raws = append(raws, archivetest.Message("a@x.test", []string{"b@y.test"}, nil, fmt.Sprintf("chunk %d", m), body.String(), time.Date(2026, 1, 1+m, 0, 0, 0, 0, time.UTC)))
		}
		require.Greater(t, messages*perMessage, termChunk)
		require.Greater(t, messages*perMessage*2*len(word(0, 0)), termChunkBytes)
		res := commitRaw(t, arc, "default", raws...)
		for m, r := range res {
			assert.Equal(t, []int64{r.ID}, searchIDs(t, arc, Query{Tenant: "default", Text: word(m, perMessage-1)}), "last word of message %d", m)
			assert.Equal(t, []int64{r.ID}, searchIDs(t, arc, Query{Tenant: "default", Text: word(m, 0) + " " + word(m, 1)}), "first words of message %d", m)
		}
		if d == database.MySQL {
			var n int
			require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM search_term WHERE id = ?`, res[0].ID).Scan(&n))
			assert.GreaterOrEqual(t, n, perMessage, "the words of message 1")
			var pairs int
			require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM search_term WHERE id = ? AND term LIKE '% %'`, res[0].ID).Scan(&pairs))
			assert.Zero(t, pairs, "pairs are in search_doc only")
		}
		// Removing a message with more terms than one DELETE takes removes all of them
		// (MariaDB deletes them by primary key from the terms search_doc lists).
		require.NoError(t, db.InTx(context.Background(), func(tx *database.Tx) error {
			return arc.RemoveFromIndex(context.Background(), tx, res[0].ID)
		}))
		assert.Equal(t, []int64{}, searchIDs(t, arc, Query{Tenant: "default", Text: word(0, perMessage-1)}))
		assert.Equal(t, []int64{}, searchIDs(t, arc, Query{Tenant: "default", Text: word(0, 0)}))
		assert.Equal(t, []int64{res[1].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: word(1, perMessage-1)}))
		if d == database.MySQL {
			var terms, docs int
			require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM search_term WHERE id = ?`, res[0].ID).Scan(&terms))
			require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM search_doc WHERE id = ?`, res[0].ID).Scan(&docs))
			assert.Zero(t, terms, "search_term rows of the removed message")
			assert.Zero(t, docs, "search_doc row of the removed message")
			require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM search_term WHERE id = ?`, res[1].ID).Scan(&terms))
			assert.GreaterOrEqual(t, terms, perMessage, "the words of message 2, kept")
		}
	})
}

// TestSearchDocMigration: on MariaDB, messages indexed before search_doc existed (and while
// search_term had its index by id) get their search_doc rows from search_term when the
// migration runs, so they are still found and an erasure still removes every term.
func TestSearchDocMigration(t *testing.T) {
	onMySQL(t, "search_doc is MariaDB's", func(t *testing.T, arc *Archive, db *database.DB) {
		day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		res := commitRaw(t, arc, "default",
			archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "harbour plans", "first draft of the quay", day),
			archivetest.Message("c@x.test", []string{"b@y.test"}, nil, "harbour budget", "second draft", day.AddDate(0, 0, 1)),
		)
		ctx := context.Background()
		termsOf := func(id int64) []string {
			return dbtest.Column[string](t, db, `SELECT term FROM search_term WHERE id = ? ORDER BY term`, id)
		}
		before := termsOf(res[0].ID)
		require.Contains(t, before, "quay")
		// The schema before the migration (the data stays), then the migrations again.
		require.NoError(t, migrations.DownTo(ctx, db, 23))
		require.Equal(t, before, termsOf(res[0].ID))
		require.NoError(t, migrations.Up(ctx, db))

		var doc string
		require.NoError(t, db.QueryRow(`SELECT terms FROM search_doc WHERE id = ?`, res[0].ID).Scan(&doc))
		assert.ElementsMatch(t, before, strings.Split(doc, "\n"), "search_doc lists the message's terms")
		assert.Equal(t, []int64{res[0].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: "draft quay"}))
		require.NoError(t, db.InTx(ctx, func(tx *database.Tx) error { return arc.RemoveFromIndex(ctx, tx, res[0].ID) }))
		assert.Empty(t, termsOf(res[0].ID), "every term of the removed message")
		assert.Equal(t, []int64{res[1].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: "harbour"}))
	})
}

// TestMySQLPairsAreCheckedInSearchDoc: on MariaDB search_term holds a message's words and
// search_doc its pairs too; a phrase finds the messages whose words stand in sequence and
// none where they stand apart, whether typed in quotes, joined by punctuation or as
// Chinese text, alone or with other conditions.
func TestMySQLPairsAreCheckedInSearchDoc(t *testing.T) {
	onMySQL(t, "search_term is MariaDB's", func(t *testing.T, arc *Archive, db *database.DB) {
		day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		res := commitRaw(t, arc, "default",
			archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "quarterly report", "see report.pdf and the harbour plans 港口计划", day),
			archivetest.Message("c@x.test", []string{"b@y.test"}, nil, "report quarterly", "plans for the harbour, a pdf report 计划港口", day.Add(time.Hour)),
		)
		first, second := res[0].ID, res[1].ID
		var pairs, words int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM search_term WHERE term LIKE '% %'`).Scan(&pairs))
		assert.Zero(t, pairs, "no pair in search_term")
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM search_term WHERE term = 'harbour'`).Scan(&words))
		assert.Equal(t, 2, words)
		var doc string
		require.NoError(t, db.QueryRow(`SELECT terms FROM search_doc WHERE id = ?`, first).Scan(&doc))
		assert.Contains(t, strings.Split(doc, docSeparator), "harbour"+" plans", "the pair in search_doc")

		for _, c := range []struct {
			q    Query
			want []int64
		}{
			{Query{Text: `"quarterly report"`}, []int64{first}},
			{Query{Text: `"report quarterly"`}, []int64{second}},
			{Query{Text: `quarterly report`}, []int64{second, first}},
			{Query{Text: `report.pdf`}, []int64{first}},
			{Query{Text: `pdf report`}, []int64{second, first}},
			{Query{Text: `"pdf report"`}, []int64{second}},
			{Query{Text: `"harbour plans"`}, []int64{first}},
			{Query{Text: `"the harbour plans"`}, []int64{first}},
			{Query{Text: `"plans for the harbour"`}, []int64{second}},
			{Query{Text: `港口`}, []int64{second, first}},
			{Query{Text: `港口计划`}, []int64{first}},
			{Query{Text: `计划港口`}, []int64{second}},
			{Query{Text: `"harbour plans" rep*`}, []int64{first}},
			{Query{Text: `"harbour plans"`, From: "c@x.test"}, []int64{}},
			{Query{Text: `"harbour plans"`, From: "a@x.test"}, []int64{first}},
			{Query{Text: `"quarterly report"`, DateFrom: day, DateTo: day.Add(time.Minute)}, []int64{first}},
			{Query{Text: `"quarterly report"`, DateFrom: day.Add(time.Minute)}, []int64{}},
			{Query{Text: `"harbour quarterly"`}, []int64{}},
		} {
			c.q.Tenant = "default"
			assert.Equal(t, c.want, searchIDs(t, arc, c.q), "%+v", c.q)
		}
	})
}

// TestMySQLWordsPlans: on MariaDB a text search reads its rarest word's range of
// search_term newest first, whatever the order the words were typed in, and stops after
// the page (no sort); a date window bounds the range read; a search by words alone is
// counted from the index without reading a message. Every page and total is the one
// expected, an erased message and another tenant's never among them.
func TestMySQLWordsPlans(t *testing.T) {
	onMySQL(t, "MariaDB's plans", func(t *testing.T, arc *Archive, db *database.DB) {
		ctx := context.Background()
		day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		sent := func(i int) time.Time { return day.Add(time.Duration((i*37)%200) * time.Hour) }
		// 200 messages, every one with "harbour", every other with "quay", one in 25 with
		// "crane"; dates in reverse of the ids in part, so that date order is not id order.
		var raws [][]byte
		for i := range 200 {
			body := "harbour"
			if i%2 == 0 {
				body += " quay"
			}
			if i%25 == 0 {
				body += " crane"
			}
			raws = append(raws, archivetest.Message("a@x.test", []string{"b@y.test"}, nil, fmt.Sprintf("note %d", i), body, sent(i)))
		}
		res := commitRaw(t, arc, "default", raws...)
		commitRaw(t, arc, "other", archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "other", "harbour quay crane", day))
		erased := res[50].ID // holds quay and crane
		_, err := arc.db.Exec(`UPDATE metadata SET erased_by = 'test' WHERE id = ?`, erased)
		require.NoError(t, err)
		require.NoError(t, arc.db.InTx(ctx, func(tx *database.Tx) error { return arc.RemoveFromIndex(ctx, tx, erased) }))
		_, err = db.Exec(`ANALYZE TABLE search_term, metadata`)
		require.NoError(t, err)

		want := func(from, to time.Time, pred func(i int) bool) []int64 {
			type hit struct {
				id   int64
				sent time.Time
			}
			var hits []hit
			for i, r := range res {
				if r.ID != erased && pred(i) && !sent(i).Before(from) && sent(i).Before(to) {
					hits = append(hits, hit{r.ID, sent(i)})
				}
			}
			slices.SortFunc(hits, func(a, b hit) int { return cmp.Or(b.sent.Compare(a.sent), cmp.Compare(b.id, a.id)) })
			ids := make([]int64, len(hits))
			for i, h := range hits {
				ids[i] = h.id
			}
			return ids
		}
		always, never := day.AddDate(-1, 0, 0), day.AddDate(1, 0, 0)
		winFrom, winTo := day.Add(40*time.Hour), day.Add(90*time.Hour)
		quay := want(always, never, func(i int) bool { return i%2 == 0 })
		crane := want(always, never, func(i int) bool { return i%25 == 0 })
		craneQuay := want(always, never, func(i int) bool { return i%50 == 0 })
		quayWindow := want(winFrom, winTo, func(i int) bool { return i%2 == 0 })
		for _, c := range []struct {
			text          string
			from, to      time.Time
			limit, offset int
			want          []int64
		}{
			{"harbour quay", time.Time{}, time.Time{}, 10, 0, quay},
			{"quay harbour", time.Time{}, time.Time{}, 10, 0, quay},
			{"harbour quay", time.Time{}, time.Time{}, 10, 80, quay},
			{"harbour crane", time.Time{}, time.Time{}, 10, 0, crane},
			{"crane quay harbour", time.Time{}, time.Time{}, 10, 0, craneQuay},
			{"quay", winFrom, winTo, 5, 0, quayWindow},
			{"quay", winFrom, winTo, 5, 10, quayWindow},
			{"harbour quay", winFrom, winTo, 5, 5, quayWindow},
			{"quay", winFrom.Add(-time.Millisecond), winTo, 5, 0, quayWindow}, // not whole seconds
		} {
			q := Query{Tenant: "default", Text: c.text, DateFrom: c.from, DateTo: c.to, Limit: c.limit, Offset: c.offset}
			st, err := arc.searchStatements(ctx, arc.db, &q)
			require.NoError(t, err)
			assert.Contains(t, st.page, "FROM search_term t STRAIGHT_JOIN ", "%q: driven from search_term", c.text)
			words := len(strings.Fields(c.text))
			assert.Equal(t, words-1, strings.Count(st.page, "STRAIGHT_JOIN search_term u"), "%q: each other word looked up before the message", c.text)
			assert.Contains(t, st.page, "ORDER BY t.datekey DESC", "%q: in the range's order", c.text)
			rarest := map[bool]string{true: "crane", false: "quay"}[strings.Contains(c.text, "crane")]
			assert.Equal(t, rarest, st.pageArgs[0], "%q: the rarest word drives", c.text)
			var explain []string
			rows, err := db.Query(`EXPLAIN `+st.page, st.pageArgs...)
			require.NoError(t, err)
			for rows.Next() {
				cols, err := rows.Columns()
				require.NoError(t, err)
				vals := make([]sql.NullString, len(cols))
				dest := make([]any, len(cols))
				for i := range dest {
					dest[i] = &vals[i]
				}
				require.NoError(t, rows.Scan(dest...))
				explain = append(explain, fmt.Sprint(vals))
			}
			require.NoError(t, rows.Err())
			require.NoError(t, rows.Close())
			assert.NotContains(t, strings.Join(explain, "\n"), "filesort", "%q: the page is read in order, not sorted: %v", c.text, explain)
			_, _, exact := exactDateKeyBounds(c.from, c.to)
			assert.Equal(t, exact, st.totalKnown, "%q from %s counted from the index alone", c.text, c.from)
			msgs, total, err := arc.Search(ctx, q)
			require.NoError(t, err)
			assert.Equal(t, len(c.want), total, "%q total", c.text)
			got := []int64{}
			for _, m := range msgs {
				got = append(got, m.ID)
			}
			end := min(c.offset+c.limit, len(c.want))
			assert.Equal(t, c.want[min(c.offset, end):end], got, "%q offset %d", c.text, c.offset)
		}
	})
}

// TestMySQLSearchTermDateKeyMigration: migration 00031 keys search_term by date key after
// the term. Rows written before it (a message's words with its id, and the pair rows an
// older release wrote) are copied with their messages' date keys, the pairs left behind;
// search_doc gets the date keys that removal needs. Searches, a removal and a reindex
// then work as on a new archive, and the migration undone restores the older layout.
func TestMySQLSearchTermDateKeyMigration(t *testing.T) {
	onMySQL(t, "search_term is MariaDB's", func(t *testing.T, arc *Archive, db *database.DB) {
		ctx := context.Background()
		day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		res := commitRaw(t, arc, "default",
			archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "harbour plans", "first draft of the quay", day),
			archivetest.Message("c@x.test", []string{"b@y.test"}, nil, "harbour budget", "second draft", day.AddDate(0, 0, 2)),
			archivetest.Message("e@x.test", []string{"b@y.test"}, nil, "quay works", "third draft", day.AddDate(0, 0, 1)),
		)
		rowsOf := func() []string {
			return dbtest.Column[string](t, db, `SELECT CONCAT(tenant_id, '|', term, '|', id) FROM search_term ORDER BY 1`)
		}
		words := rowsOf()
		require.NotEmpty(t, words)

		require.NoError(t, migrations.DownTo(ctx, db, 30))
		assert.Equal(t, words, rowsOf(), "the rows in the older layout")
		// What an older release also wrote: every term of search_doc in search_term, pairs too.
		_, err := db.Exec(`INSERT IGNORE INTO search_term (tenant_id, term, id) SELECT d.tenant_id, j.term, d.id
			FROM search_doc d, JSON_TABLE(CONCAT('["', REPLACE(d.terms, '
', '","'), '"]'), '$[*]' COLUMNS (term VARCHAR(257) PATH '$')) j`)
		require.NoError(t, err)
		require.Positive(t, dbtest.Column[int](t, db, `SELECT COUNT(*) FROM search_term WHERE term LIKE '% %'`)[0], "the older release's pair rows")

		require.NoError(t, migrations.Up(ctx, db))
		assert.Equal(t, words, rowsOf(), "the words, without the pairs")
		assert.Zero(t, dbtest.Column[int](t, db, `SELECT COUNT(*) FROM search_term t JOIN metadata m ON m.id = t.id WHERE t.datekey <> m.datekey`)[0], "each row with its message's date key")
		assert.Zero(t, dbtest.Column[int](t, db, `SELECT COUNT(*) FROM search_doc d JOIN metadata m ON m.id = d.id WHERE d.datekey <> m.datekey`)[0], "each search_doc row with its message's date key")

		assert.Equal(t, []int64{res[1].ID, res[2].ID, res[0].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: "draft"}))
		assert.Equal(t, []int64{res[0].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: `"harbour plans"`}))
		assert.Equal(t, []int64{res[2].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: "draft", DateFrom: day.AddDate(0, 0, 1), DateTo: day.AddDate(0, 0, 2)}))

		require.NoError(t, db.InTx(ctx, func(tx *database.Tx) error { return arc.RemoveFromIndex(ctx, tx, res[0].ID) }))
		assert.Zero(t, dbtest.Column[int](t, db, `SELECT COUNT(*) FROM search_term WHERE id = ?`, res[0].ID)[0], "every row of the removed message")
		assert.Equal(t, []int64{res[1].ID, res[2].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: "draft"}))
		_, err = arc.Reindex(ctx, ReindexOptions{}) // every visible message indexed again
		require.NoError(t, err)
		assert.Equal(t, words, rowsOf(), "the words as the migration left them")
		assert.Equal(t, []int64{res[1].ID, res[2].ID, res[0].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: "draft"}))
		assert.Equal(t, []int64{res[2].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: `"quay works"`}))
	})
}

// TestSQLiteIndexMergesEightSegmentsALevel: SQLite's FTS5 index merges a level once eight
// segments are there (migration 00029; docs/performance.md, "SQLite: FTS5's automerge at
// 8"), for a new archive and for one written before the migration, and every message of
// many small commits (a segment each, merged along the way) is still found.
func TestSQLiteIndexMergesEightSegmentsALevel(t *testing.T) {
	ctx := context.Background()
	automerge := func(t *testing.T, db *database.DB) int {
		return dbtest.Column[int](t, db, `SELECT v FROM message_search_config WHERE k = 'automerge'`)[0]
	}
	arc, db := newSearchArchive(t, database.SQLite)
	assert.Equal(t, 8, automerge(t, db), "a new archive")

	require.NoError(t, migrations.DownTo(ctx, db, 28))
	assert.Equal(t, 4, automerge(t, db), "the migration undone")
	day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	word := func(i int) string { return fmt.Sprintf("quay%c%c", 'a'+i/26, 'a'+i%26) }
	var ids []int64
	for i := 0; i < 40; i++ {
		if i == 10 {
			require.NoError(t, migrations.Up(ctx, db))
			assert.Equal(t, 8, automerge(t, db), "an archive written before the migration")
		}
		res := commitRaw(t, arc, "default", archivetest.Message("a@x.test", []string{"b@y.test"}, nil,
			"harbour "+word(i), "a draft", day.Add(time.Duration(i)*time.Hour)))
		ids = append(ids, res[0].ID)
	}
	for i, id := range ids {
		assert.Equal(t, []int64{id}, searchIDs(t, arc, Query{Tenant: "default", Text: word(i)}), word(i))
	}
	_, total, err := arc.Search(ctx, Query{Tenant: "default", Text: "harbour draft", Limit: 5})
	require.NoError(t, err)
	assert.Equal(t, len(ids), total)
}

// TestSQLiteIndexFlushesAtSixteenMiB: SQLite's FTS5 index holds up to 16 MiB of a
// transaction's postings before it writes them out as a segment (migration 00030;
// docs/performance.md, "SQLite: one segment a batch"), in a new archive and in one written
// before the migration, and what a batch of many messages wrote is all found.
func TestSQLiteIndexFlushesAtSixteenMiB(t *testing.T) {
	ctx := context.Background()
	hashsize := func(t *testing.T, db *database.DB) []int {
		return dbtest.Column[int](t, db, `SELECT v FROM message_search_config WHERE k = 'hashsize'`)
	}
	arc, db := newSearchArchive(t, database.SQLite)
	assert.Equal(t, []int{16 << 20}, hashsize(t, db), "a new archive")
	require.NoError(t, migrations.DownTo(ctx, db, 29))
	assert.Equal(t, []int{1 << 20}, hashsize(t, db), "the migration undone: FTS5's default")
	require.NoError(t, migrations.Up(ctx, db))
	assert.Equal(t, []int{16 << 20}, hashsize(t, db), "an archive written before the migration")

	day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var raws [][]byte
	for i := range 300 {
		raws = append(raws, archivetest.Message("a@x.test", []string{"b@y.test"}, nil,
			fmt.Sprintf("lagoon q%d", i), "a long draft", day.Add(time.Duration(i)*time.Minute)))
	}
	res := commitRaw(t, arc, "default", raws...) // one transaction
	for _, i := range []int{0, 150, 299} {
		assert.Equal(t, []int64{res[i].ID}, searchIDs(t, arc, Query{Tenant: "default", Text: fmt.Sprintf("q%d", i)}))
	}
	_, total, err := arc.Search(ctx, Query{Tenant: "default", Text: "lagoon draft", Limit: 5})
	require.NoError(t, err)
	assert.Equal(t, 300, total)
}

// TestMySQLRemoveTermsReadsRanges: a DELETE of removeTerms with removeKeys long keys is
// read as ranges of search_term's primary key, never as a scan of the table (MariaDB
// falls back to a scan when the ranges outgrow range_optimizer_max_mem_size).
func TestMySQLRemoveTermsReadsRanges(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		if d != database.MySQL {
			t.Skip("search_term is MariaDB's")
		}
		_, db := newSearchArchive(t, d)
		// An archive's worth of rows (on a nearly empty table a scan is cheapest), analysed.
		for batch := range 10 {
			rows := make([]any, 0, 4*5000)
			for i := range 5000 {
				id := batch*5000 + i
				rows = append(rows, "default", fmt.Sprintf("w%d", id%2000), int64(id)<<dateKeyIDBits|int64(id), id)
			}
			_, err := db.Exec(`INSERT INTO search_term (tenant_id, term, datekey, id) VALUES `+database.Rows(5000, `(?, ?, ?, ?)`), rows...)
			require.NoError(t, err)
		}
		_, err := db.Exec(`ANALYZE TABLE search_term`)
		require.NoError(t, err)
		args := make([]any, 0, 4*removeKeys)
		for i := range removeKeys {
			args = append(args, "default", fmt.Sprintf("%s%d", strings.Repeat("t", 250), i), int64(i)<<dateKeyIDBits|int64(i), int64(i))
		}
		var id, selectType, table, access string
		var rest [6]sql.NullString
		err = db.QueryRow(`EXPLAIN DELETE FROM search_term WHERE (tenant_id, term, datekey, id) IN (`+database.Rows(removeKeys, `(?, ?, ?, ?)`)+`)`, args...).
			Scan(&id, &selectType, &table, &access, &rest[0], &rest[1], &rest[2], &rest[3], &rest[4], &rest[5])
		require.NoError(t, err)
		assert.Equal(t, "range", access, "access type of the DELETE (key %s)", rest[1].String)
		assert.Equal(t, "PRIMARY", rest[1].String)
	})
}

// The FTS5 row is written term by term without making each term's string: the same bytes
// as ftsTerm's, pairs joined by ftsPairJoin.
func TestWriteFTSTerm(t *testing.T) {
	for _, term := range []string{"", "word", "a b", "résumé café", "x y z", " lead", "trail "} {
		var b strings.Builder
		writeFTSTerm(&b, term)
		assert.Equal(t, ftsTerm(term), b.String(), "%q", term)
	}
	var b strings.Builder
	writeFTSTerm(&b, "report pdf")
	assert.Equal(t, "report_pdf", b.String())
}
