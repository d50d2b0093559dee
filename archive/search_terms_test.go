package archive

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

func TestIndexTerms(t *testing.T) {
	long := strings.Repeat("é", 70)
	cases := []struct {
		name, in string
		want     []string
	}{
		{"lower-cased, split on punctuation", "Quarterly-Report, FINAL!", []string{"quarterly", "report", "final"}},
		{"address parts", "alice@example.com", []string{"alice", "example", "com"}},
		{"digits are term characters", "invoice 2026-03 no.42", []string{"invoice", "2026", "03", "no", "42"}},
		{"single characters left out", "a b c ab", []string{"ab"}},
		{"distinct, first appearance first", "the cat saw THE Cat", []string{"the", "cat", "saw"}},
		{"non-Latin letters", "Grüße aus Köln, привет мир", []string{"grüße", "aus", "köln", "привет", "мир"}},
		{"combining marks stay in the word", "cafe\u0301 noir", []string{"cafe\u0301", "noir"}},
		{"cut to 64 runes", long, []string{strings.Repeat("é", 64)}},
		{"equal after the cut: one term", long + " " + strings.Repeat("é", 66), []string{strings.Repeat("é", 64)}},
		{"nothing", " ,;:-_ ", nil},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, indexTerms(c.in), c.name)
	}
	for _, term := range indexTerms(long + " " + strings.Repeat("ẞ", 100)) {
		assert.LessOrEqual(t, utf8.RuneCountInString(term), maxTermRunes)
	}
}

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

// TestMySQLSearchTerms covers what the term table of MySQL does differently from a
// full-text engine: addresses are their parts, long words are cut, short ones ignored.
func TestMySQLSearchTerms(t *testing.T) {
	arc, db := newSearchArchive(t, database.MySQL)
	day := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	long := strings.Repeat("ö", 64) + "tail"
	res := commitRaw(t, arc, "default",
		archivetest.Message("alice@example.com", []string{"bob@beta.test"}, nil, "Quarterly report", "see "+long, day),
		archivetest.Message("carol@other.test", []string{"dave@beta.test"}, nil, "Lunch", "with alice", day.AddDate(0, 0, 1)),
	)
	commitRaw(t, arc, "other", archivetest.Message("eve@example.com", []string{"bob@beta.test"}, nil, "quarterly report", "lunch", day))
	report, lunch := res[0].ID, res[1].ID
	cases := []struct {
		name string
		q    Query
		want []int64 // newest first
	}{
		{"an address needs all its parts", Query{Text: "alice@example.com"}, []int64{report}},
		{"a part of an address", Query{Text: "example"}, []int64{report}},
		{"a name in an address or a body", Query{Text: "alice"}, []int64{lunch, report}},
		{"case does not matter", Query{Text: "QUARTERLY"}, []int64{report}},
		{"a long word", Query{Text: long}, []int64{report}},
		{"a long word is cut to 64 runes", Query{Text: strings.Repeat("ö", 64) + "other"}, []int64{report}},
		{"short words are dropped", Query{Text: "a report"}, []int64{report}},
		{"only short words: no text condition", Query{Text: "a b"}, []int64{lunch, report}},
		{"all words required", Query{Text: "alice lunch"}, []int64{lunch}},
		{"no match", Query{Text: "report lunch"}, []int64{}},
		{"text and participant", Query{Text: "report", Participant: "bob@beta.test"}, []int64{report}},
		{"text and another participant", Query{Text: "report", Participant: "dave@beta.test"}, []int64{}},
		{"text and date", Query{Text: "alice", DateFrom: day.Add(time.Hour)}, []int64{lunch}},
		{"text and sender", Query{Text: "alice", From: "carol@other.test"}, []int64{lunch}},
	}
	for _, c := range cases {
		c.q.Tenant = "default"
		assert.Equal(t, c.want, searchIDs(t, arc, c.q), c.name)
	}
	var longest int
	require.NoError(t, db.QueryRow(`SELECT MAX(CHAR_LENGTH(term)) FROM search_term`).Scan(&longest))
	assert.Equal(t, maxTermRunes, longest, "the longest stored term")
}

// TestMySQLIndexChunks: a commit whose terms exceed one INSERT's rows and bytes is indexed
// whole.
func TestMySQLIndexChunks(t *testing.T) {
	arc, db := newSearchArchive(t, database.MySQL)
	// Each term is 64 four-byte runes: 900 per message, six messages, 5,400 rows of 256
	// bytes, past termChunk and termChunkBytes.
	const perMessage, messages = 900, 6
	term := func(m, i int) string {
		return strings.Repeat("\U00020000", 61) + string(rune(0x20100+m)) + string(rune(0x20200+i%100)) + string(rune(0x20300+i/100))
	}
	var raws [][]byte
	for m := range messages {
		var body strings.Builder
		for i := range perMessage {
			body.WriteString(term(m, i))
			body.WriteString("\r\n")
		}
		raws = append(raws, archivetest.Message("a@x.test", []string{"b@y.test"}, nil, fmt.Sprintf("chunk %d", m), body.String(), time.Date(2026, 1, 1+m, 0, 0, 0, 0, time.UTC)))
	}
	require.Greater(t, messages*perMessage, termChunk)
	require.Greater(t, messages*perMessage*len(term(0, 0)), termChunkBytes)
	res := commitRaw(t, arc, "default", raws...)
	for m, r := range res {
		var n int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM search_term WHERE id = ?`, r.ID).Scan(&n))
		assert.GreaterOrEqual(t, n, perMessage, "terms of message %d", m)
		assert.Equal(t, []int64{r.ID}, searchIDs(t, arc, Query{Tenant: "default", Text: term(m, perMessage-1)}), "last term of message %d", m)
	}
}
