package handlers_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestCorpusSearchRecall: every message of the corpus is found by queries made of its own
// words (corpus_words_test.go): single words, phrases of two adjacent words, a substring
// of a Chinese, Japanese or Korean run; and the three databases give the same answers.
func TestCorpusSearchRecall(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("SKIP: 1,400 searches per database (20 seconds each under -race); not with -short")
	}
	answers := map[database.Dialect]map[string][]string{} // files found, by dialect and query
	var queries []corpusQuery
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newCorpusFixture(t, d)
		if queries == nil {
			for _, m := range f.oracle.messages {
				qs, notes := queriesOf(m)
				for _, n := range notes {
					t.Logf("%s: %s", m.rel, n)
				}
				queries = append(queries, qs...)
			}
			t.Logf("%d queries", len(queries))
		}
		answers[d] = map[string][]string{}
		for _, q := range queries {
			found := f.searchText(t, q.q)
			id := f.ids[f.oracle.byRel(q.rel).digest]
			assert.Contains(t, found, id, "%s: q=%q (from its %s) does not find it", q.rel, q.q, q.source)
			answers[d][q.q] = f.names(found)
		}
	})
	compareDialects(t, answers)
}

// searchText returns the ids of the messages a text query finds, sorted; a query the
// archive refuses is a failure, and finds nothing.
func (f *corpusFixture) searchText(t *testing.T, text string) []int64 {
	t.Helper()
	msgs, total, err := f.arc.Search(t.Context(), archive.Query{Tenant: app.DefaultTenant, Text: text, Limit: 10_000})
	if !assert.NoError(t, err, "q=%q", text) {
		return nil
	}
	assert.Len(t, msgs, total, "q=%q", text)
	ids := make([]int64, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	slices.Sort(ids)
	return ids
}

// compareDialects requires every dialect that ran to answer each query with the same
// files as SQLite.
func compareDialects(t *testing.T, answers map[database.Dialect]map[string][]string) {
	t.Helper()
	base := answers[database.SQLite]
	for d, got := range answers {
		if d == database.SQLite {
			continue
		}
		for q, files := range base {
			want := slices.Sorted(slices.Values(files))
			assert.Equal(t, want, slices.Sorted(slices.Values(got[q])), "q=%q: %s and sqlite differ", q, d)
		}
	}
}
