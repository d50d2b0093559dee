package main

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// Tiny corpora: the tests take seconds.
const (
	testMessages   = 300
	testVocabulary = 2000
)

func testCorpus(seed uint64) *corpus { return newCorpus(seed, testVocabulary, 1.1, 150) }

func TestCorpusIsDeterministic(t *testing.T) {
	t.Parallel()
	a, b := testCorpus(1), testCorpus(1)
	require.Equal(t, a.words, b.words, "the vocabulary")
	var set analyzer.TermSet
	for _, i := range []int{0, 1, 77, 299} {
		assert.Equal(t, a.terms(i, &set), b.terms(i, &set), "message %d on two corpora", i)
		assert.Equal(t, a.terms(i, &set), a.terms(i, &set), "message %d twice", i)
	}
	assert.NotEqual(t, a.terms(1, &set), a.terms(2, &set))
	assert.NotEqual(t, a.terms(1, &set), testCorpus(2).terms(1, &set), "another seed, another message")
	assert.Equal(t, a.batch(10, 13), b.batch(10, 13))
}

func TestCorpusLooksLikeMail(t *testing.T) {
	t.Parallel()
	c := testCorpus(1)
	assert.Len(t, uniq(c.words), testVocabulary, "the words are distinct")
	for _, w := range c.words[:shortestWords] {
		assert.LessOrEqual(t, len(w), 3, "a most frequent word is one syllable: %q", w)
	}
	var set analyzer.TermSet
	words, terms := 0, 0
	for i := range 100 {
		subject, body := c.text(i)
		words += len(subject) + len(body)
		ts := c.terms(i, &set)
		terms += len(ts)
		assert.Len(t, uniq(ts), len(ts), "message %d: terms are distinct", i)
		assert.Contains(t, ts, body[0]+analyzer.PairSeparator+body[1], "message %d holds its first pair", i)
	}
	assert.InDelta(t, 150, float64(words)/100, 15, "words a message")
	assert.Greater(t, terms, words, "words and pairs")
}

func TestQueriesAreDeterministicAndOfTheirClass(t *testing.T) {
	t.Parallel()
	c := testCorpus(1)
	st := countWords(c, testMessages)
	qs := drawQueries(c, testMessages, 7, 1, st.df)
	require.Equal(t, qs, drawQueries(c, testMessages, 7, 1, countWords(c, testMessages).df))
	require.Len(t, qs, 7*len(queryKinds))
	for _, bq := range qs {
		switch bq.kind {
		case kindRare:
			assert.LessOrEqual(t, st.df[bq.q.Terms[0]], rareMax, "%s", bq)
		case kindCommon:
			assert.GreaterOrEqual(t, st.df[bq.q.Terms[0]], testMessages/5, "%s", bq)
		case kindAnd:
			assert.Len(t, bq.q.Terms, 2)
		case kindPair:
			assert.Contains(t, bq.q.Terms[0], analyzer.PairSeparator)
		case kindPrefix:
			assert.Len(t, []rune(bq.q.Prefixes[0]), analyzer.MinPrefixRunes)
		}
	}
}

// TestAnswersAreWhatTheTermListsSay checks the oracle against a plain scan of every
// message's terms, with and without a filter.
func TestAnswersAreWhatTheTermListsSay(t *testing.T) {
	t.Parallel()
	c := testCorpus(3)
	const n = 120
	qs := drawQueries(c, n, 5, 3, countWords(c, n).df)
	short := func(term string) bool { return len(term) > 2 }
	got := answers(c, n, qs, nil, short)
	var set analyzer.TermSet
	for k, bq := range qs {
		var want, wantShort []int64
		for i := range n {
			ts := c.terms(i, &set)
			if holds(ts, bq.q, nil) {
				want = append(want, int64(i+1))
			}
			if holds(ts, bq.q, short) {
				wantShort = append(wantShort, int64(i+1))
			}
		}
		assert.Equal(t, want, got[0][k], "%s query %q", bq.kind, bq)
		assert.Equal(t, wantShort, got[1][k], "%s query %q, filtered", bq.kind, bq)
	}
}

func holds(terms []string, q analyzer.Query, keep tokenFilter) bool {
	has := func(match func(string) bool) bool {
		return slices.ContainsFunc(terms, func(t string) bool { return (keep == nil || keep(t)) && match(t) })
	}
	for _, want := range q.Terms {
		if !has(func(t string) bool { return t == want }) {
			return false
		}
	}
	for _, p := range q.Prefixes {
		if !has(func(t string) bool { return strings.HasPrefix(t, p) }) {
			return false
		}
	}
	return true
}

// TestLayoutsAgree runs the benchmark on a tiny corpus on every database: both layouts
// must return what the generator says for every query (FULLTEXT: what its token rules
// leave of it).
func TestLayoutsAgree(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		cfg, err := parseFlags([]string{"-n", "300", "-vocabulary", "2000", "-batch", "70", "-queries", "4",
			"-warmup", "3", "-probes", "5", "-tmpdir", t.TempDir()}, io.Discard)
		require.NoError(t, err)
		cfg.urls = map[database.Dialect]string{d: serverURL(t, d)}
		sh := prepare(cfg)
		res, err := runDialect(context.Background(), cfg, sh, d, io.Discard)
		require.NoError(t, err)
		require.Zero(t, res.bench.wrong.n, "wrong answers: %v", res.bench.wrong.shown)
		for j, r := range res.bench.results {
			assert.Positive(t, r.insert, "layout %d insert time", j)
			assert.Positive(t, r.sizes[0].bytes, "layout %d size", j)
			for _, kind := range queryKinds {
				assert.Len(t, best(r, kind), cfg.queries-res.bench.excluded[kind], "layout %d: %s latencies", j, kind)
			}
		}
		if d != database.MySQL {
			assert.Empty(t, res.bench.excluded, "only FULLTEXT's losses leave queries out")
		}
		if d == database.MySQL {
			require.NotNil(t, res.loss)
			assert.NotEmpty(t, res.loss.probes, "the corpus has words FULLTEXT cannot index")
		}
	})
}

// serverURL is the admin URL the benchmark creates its databases on (none for SQLite).
func serverURL(t *testing.T, d database.Dialect) string {
	t.Helper()
	if d == database.SQLite {
		return ""
	}
	_ = dbtest.URL(t, d) // skips (or fails under CI) when the server is not configured
	return os.Getenv(map[database.Dialect]string{database.Postgres: "TEST_POSTGRES_URL", database.MySQL: "TEST_MYSQL_URL"}[d])
}

func TestBtreeIntersectionForms(t *testing.T) {
	t.Parallel()
	b := &btree{table: "x", tenant: true}
	q := analyzer.Query{Terms: []string{"rare", "common"}}
	sql, args := b.query(q, formIn)
	assert.Equal(t, "SELECT id FROM x WHERE tenant_id = ? AND term = ? AND id IN (SELECT id FROM x WHERE tenant_id = ? AND term = ?)", sql)
	assert.Equal(t, []any{benchTenant, "rare", benchTenant, "common"}, args)
	sql, args = b.query(q, formSelfJoin)
	assert.Equal(t, "SELECT t0.id FROM x t0 JOIN x t1 ON t1.id = t0.id WHERE t0.tenant_id = ? AND t0.term = ? AND t1.tenant_id = ? AND t1.term = ?", sql)
	assert.Equal(t, []any{benchTenant, "rare", benchTenant, "common"}, args)
	sql, args = (&btree{table: "x"}).query(analyzer.Query{Prefixes: []string{"abc"}}, formSelfJoin)
	assert.Equal(t, "SELECT DISTINCT id FROM x WHERE term >= ? AND term < ?", sql)
	assert.Equal(t, []any{"abc", analyzer.PrefixEnd("abc")}, args)
}

func TestCommandLineQuotesAndHidesPasswords(t *testing.T) {
	t.Parallel()
	got := commandLine([]string{"-n", "50000", "-postgres", "postgres://u:secret@h:5432/db?sslmode=disable", "-mysql", "mysql://root@tcp(h:3306)/db"})
	assert.Equal(t, `go run ./bench/indexlayout -n 50000 -postgres 'postgres://u:xxxxx@h:5432/db?sslmode=disable' -mysql 'mysql://root@tcp(h:3306)/db'`, got)
}

func uniq(s []string) []string { return slices.Compact(slices.Sorted(slices.Values(s))) }

// TestPostgresAlternativesAgree: the positions and bucket layouts answer every query as the
// generator says, on a corpus whose messages pass the position limits too.
func TestPostgresAlternativesAgree(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		if d != database.Postgres {
			t.Skip("PostgreSQL's alternatives only")
		}
		for _, alt := range []string{pgPositions, pgBuckets} {
			cfg, err := parseFlags([]string{"-postgres-alternative", alt, "-n", "40", "-vocabulary", "300", "-words", "20000",
				"-batch", "20", "-queries", "4", "-warmup", "0"}, io.Discard)
			require.NoError(t, err)
			cfg.urls = map[database.Dialect]string{d: serverURL(t, d)}
			res, err := runDialect(context.Background(), cfg, prepare(cfg), d, io.Discard)
			require.NoError(t, err, alt)
			assert.Zero(t, res.bench.wrong.n, "%s: wrong answers: %v", alt, res.bench.wrong.shown)
		}
	})
}

// TestMySQLIDIndexAlternativeAgrees: the layout before migration 00024 (an index by id
// instead of search_doc) answers every query as the generator says.
func TestMySQLIDIndexAlternativeAgrees(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		if d != database.MySQL {
			t.Skip("MariaDB's alternative only")
		}
		cfg, err := parseFlags([]string{"-mysql-alternative", myIDIndex, "-n", "40", "-vocabulary", "300",
			"-batch", "20", "-queries", "4", "-warmup", "0"}, io.Discard)
		require.NoError(t, err)
		cfg.urls = map[database.Dialect]string{d: serverURL(t, d)}
		res, err := runDialect(context.Background(), cfg, prepare(cfg), d, io.Discard)
		require.NoError(t, err)
		assert.Zero(t, res.bench.wrong.n, "wrong answers: %v", res.bench.wrong.shown)
		assert.Nil(t, res.loss, "no FULLTEXT, no loss report")
	})
}
