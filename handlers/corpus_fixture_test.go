package handlers_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
)

// The corpus tests prove the address rule and the word analyzer on the whole shared
// corpus, on each database: what the archive stores, counts, holds, shows and finds equals
// what an independent reading of the files says (corpus_oracle_test.go for the addresses
// and attachments, corpus_words_test.go and corpus_text_test.go for the words). The tests
// are corpus_addresses_test.go, corpus_holds_test.go and corpus_search_test.go.

// corpusFixture is the API over one database with the whole corpus imported.
type corpusFixture struct {
	*gdprFixture
	oracle *corpusOracle
	ids    map[string]int64 // message id by corpusMessage.digest
	byID   map[int64]*corpusMessage
}

// newCorpusFixture imports the corpus into a fresh database of dialect d. The oracle keeps
// the messages the importer archived (a file it refuses is logged, and has no roles).
func newCorpusFixture(t *testing.T, d database.Dialect) *corpusFixture {
	t.Helper()
	f := &corpusFixture{gdprFixture: newGDPRFixture(t, d), oracle: readCorpusOracle(t)}
	rep, err := (&archive.Importer{Archive: f.arc}).Import(t.Context(), app.DefaultTenant, []string{f.oracle.dir})
	require.NoError(t, err)
	failed := map[string]bool{}
	for _, fail := range rep.Failures {
		t.Logf("not archived: %s", fail)
		failed[fail.Source] = true
	}
	f.oracle.only(func(m *corpusMessage) bool { return !failed[m.path] })
	msgs, _, err := f.arc.Search(t.Context(), archive.Query{Tenant: app.DefaultTenant, Limit: 10_000})
	require.NoError(t, err)
	f.ids, f.byID = map[string]int64{}, map[int64]*corpusMessage{}
	for _, m := range msgs {
		f.ids[m.Digest] = m.ID
	}
	for _, m := range f.oracle.messages {
		id, ok := f.ids[m.digest]
		require.True(t, ok, "%s is not in the archive", m.rel)
		f.byID[id] = m
	}
	require.Len(t, msgs, len(f.oracle.messages), "one message per distinct archived file")
	return f
}

// idsOf returns the ids of messages, sorted.
func (f *corpusFixture) idsOf(msgs []*corpusMessage) []int64 {
	out := make([]int64, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, f.ids[m.digest])
	}
	slices.Sort(out)
	return out
}

// names returns the corpus files of ids, for failure messages.
func (f *corpusFixture) names(ids []int64) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if m := f.byID[id]; m != nil {
			out = append(out, m.rel)
		} else {
			out = append(out, "?")
		}
	}
	return out
}

// search returns the ids of the messages q finds, sorted; it requires them all on one page.
func (f *corpusFixture) search(t *testing.T, q archive.Query) []int64 {
	t.Helper()
	q.Tenant, q.Limit = app.DefaultTenant, 10_000
	msgs, total, err := f.arc.Search(t.Context(), q)
	require.NoError(t, err, "%+v", q)
	require.Len(t, msgs, total, "%+v", q)
	ids := make([]int64, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	slices.Sort(ids)
	return ids
}

// relNames returns the corpus files of msgs, for failure messages.
func relNames(msgs []*corpusMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.rel
	}
	return out
}

// distinct returns ids sorted, each once (never nil).
func distinct(ids []int64) []int64 {
	out := append([]int64{}, ids...)
	slices.Sort(out)
	return slices.Compact(out)
}
