package archive_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

type fixture struct {
	arc     *archive.Archive
	db      *database.DB
	dataDir string
}

func newFixture(t *testing.T, d database.Dialect) *fixture {
	t.Helper()
	dir := t.TempDir()
	db := dbtest.Open(t, d)
	blobs, err := archive.NewLocalStore(filepath.Join(dir, "store"))
	require.NoError(t, err)
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	require.NoError(t, err)
	arc, err := archive.New(db, blobs, keys, archive.Options{})
	require.NoError(t, err)
	return &fixture{arc: arc, db: db, dataDir: dir}
}

func (f *fixture) store(t *testing.T, tenant string, raws ...[]byte) []archive.Result {
	t.Helper()
	var batch []*archive.Prepared
	for i, raw := range raws {
		p, err := f.arc.Prepare(archive.Incoming{Tenant: tenant, Raw: raw, Source: "msg" + string(rune('0'+i))})
		require.NoError(t, err)
		batch = append(batch, p)
	}
	res, err := f.arc.Commit(context.Background(), batch)
	require.NoError(t, err)
	return res
}

func TestArchive(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		t.Run("corpus reads back byte-identical", func(t *testing.T) { testCorpus(t, d) })
		t.Run("integrity", func(t *testing.T) { testIntegrity(t, d) })
		t.Run("search", func(t *testing.T) { testSearch(t, d) })
		t.Run("search without words", func(t *testing.T) { testSearchWithoutWords(t, d) })
		t.Run("tenant isolation", func(t *testing.T) { testTenants(t, d) })
		t.Run("sizes", func(t *testing.T) { testSizes(t, d) })
	})
}

// testSizes: Sizes gives the original size of the tenant's visible messages and leaves out
// another tenant's and unknown ids.
func testSizes(t *testing.T, d database.Dialect) {
	f := newFixture(t, d)
	ctx := context.Background()
	raws := [][]byte{
		[]byte("From: a@x.test\r\nTo: b@y.test\r\nSubject: one\r\n\r\nshort\r\n"),
		[]byte("From: a@x.test\r\nTo: b@y.test\r\nSubject: two\r\n\r\n" + strings.Repeat("longer body\r\n", 300)),
	}
	mine := f.store(t, "acme", raws...)
	theirs := f.store(t, "globex", []byte("From: c@z.test\r\nTo: b@y.test\r\nSubject: three\r\n\r\nx\r\n"))
	sizes, err := f.arc.Sizes(ctx, "acme", []int64{mine[0].ID, mine[1].ID, theirs[0].ID, 987654321})
	require.NoError(t, err)
	assert.Equal(t, map[int64]int64{mine[0].ID: int64(len(raws[0])), mine[1].ID: int64(len(raws[1]))}, sizes)
	sizes, err = f.arc.Sizes(ctx, "acme", nil)
	require.NoError(t, err)
	assert.Empty(t, sizes)
}

func testCorpus(t *testing.T, d database.Dialect) {
	f := newFixture(t, d)
	ctx := context.Background()
	var batch []*archive.Prepared
	var stored [][]byte
	for _, path := range archivetest.CorpusFiles(t) {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		p, err := f.arc.Prepare(archive.Incoming{Tenant: "default", Raw: raw, Source: path})
		if err != nil {
			t.Logf("not archived (reported): %s: %v", filepath.Base(path), err)
			continue
		}
		batch = append(batch, p)
		stored = append(stored, raw)
	}
	res, err := f.arc.Commit(ctx, batch)
	require.NoError(t, err)
	distinct := map[[32]byte]bool{}
	for i, r := range res {
		digest := sha256.Sum256(stored[i])
		assert.Equal(t, distinct[digest], r.Duplicate, "duplicate flag of message %d", i)
		distinct[digest] = true
		got, err := f.arc.Raw(ctx, "default", r.ID)
		require.NoError(t, err)
		assert.Equal(t, digest, sha256.Sum256(got), "message %d: stored bytes differ from the file", r.ID)
	}
	var rows int
	require.NoError(t, f.db.QueryRow(`SELECT COUNT(*) FROM metadata`).Scan(&rows))
	assert.Equal(t, len(distinct), rows, "metadata rows; want one per distinct message")
	assertNoPlaintext(t, filepath.Join(f.dataDir, "store"), []string{"Please read my attached letter", "titkositott zip"})
}

func assertNoPlaintext(t *testing.T, dir string, needles []string) {
	t.Helper()
	files := 0
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		for _, n := range needles {
			assert.NotContains(t, string(b), n, "%s holds plaintext", p)
		}
		return nil
	}))
	assert.Greater(t, files, 0)
}

func testIntegrity(t *testing.T, d database.Dialect) {
	f := newFixture(t, d)
	ctx := context.Background()
	raw := archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "integrity", "body", time.Now())
	res := f.store(t, "default", raw)
	path := filepath.Join(f.dataDir, "store", filepath.FromSlash(archive.MessageKey("default", res[0].ID)))
	sealed, err := os.ReadFile(path)
	require.NoError(t, err)
	flipped := append([]byte{}, sealed...)
	flipped[len(flipped)/2] ^= 0x01
	require.NoError(t, os.WriteFile(path, flipped, 0o600))
	_, err = f.arc.Raw(ctx, "default", res[0].ID)
	assert.ErrorIs(t, err, archive.ErrIntegrity, "a flipped byte; got %v", err)

	require.NoError(t, os.WriteFile(path, sealed, 0o600))
	otherKeys, err := archive.LoadOrCreateKeyring(t.TempDir())
	require.NoError(t, err)
	blobs, _ := archive.NewLocalStore(filepath.Join(f.dataDir, "store"))
	wrong, err := archive.New(f.db, blobs, otherKeys, archive.Options{})
	require.NoError(t, err)
	_, err = wrong.Raw(ctx, "default", res[0].ID)
	assert.ErrorIs(t, err, archive.ErrUnknownKey, "wrong key; got %v", err)
}

func testSearch(t *testing.T, d database.Dialect) {
	f := newFixture(t, d)
	ctx := context.Background()
	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.store(t, "default",
		archivetest.Message("alice@alpha.test", []string{"bob@beta.test"}, nil, "Quarterly budget review", "numbers attached", day),
		archivetest.Message("bob@beta.test", []string{"alice@alpha.test"}, []string{"carol@gamma.test"}, "Re: lunch plans", "pizza tomorrow", day.AddDate(0, 0, 10)),
		archivetest.WithAttachment("carol@gamma.test", "dave@delta.test", "contract draft", "see file", "contract-v2.pdf", []byte("%PDF-1.4 fake"), day.AddDate(0, 1, 0)),
	)
	cases := []struct {
		name string
		q    archive.Query
		want []string // subjects, newest first
	}{
		{"subject word", archive.Query{Text: "budget"}, []string{"Quarterly budget review"}},
		{"body word", archive.Query{Text: "pizza"}, []string{"Re: lunch plans"}},
		{"attachment name", archive.Query{Text: "contract"}, []string{"contract draft"}},
		{"sender", archive.Query{From: "alice@alpha.test"}, []string{"Quarterly budget review"}},
		{"sender domain", archive.Query{From: "@beta.test"}, []string{"Re: lunch plans"}},
		{"recipient incl cc", archive.Query{To: "carol@gamma.test"}, []string{"Re: lunch plans"}},
		{"date range", archive.Query{DateFrom: day.AddDate(0, 0, 5), DateTo: day.AddDate(0, 0, 20)}, []string{"Re: lunch plans"}},
		{"participant", archive.Query{Participant: "alice@alpha.test"}, []string{"Re: lunch plans", "Quarterly budget review"}},
		{"nothing", archive.Query{Text: "nonexistentword"}, []string{}},
	}
	for _, c := range cases {
		c.q.Tenant = "default"
		msgs, total, err := f.arc.Search(ctx, c.q)
		require.NoError(t, err, c.name)
		got := []string{}
		for _, m := range msgs {
			got = append(got, m.Subject)
		}
		assert.Equal(t, c.want, got, "%s: got %v; want %v", c.name, got, c.want)
		assert.Equal(t, len(c.want), total, c.name)
	}
}

// testSearchWithoutWords: a query with no searchable word (only punctuation, query syntax
// or control characters) sets no text condition; the other filters still apply.
func testSearchWithoutWords(t *testing.T, d database.Dialect) {
	f := newFixture(t, d)
	ctx := context.Background()
	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.store(t, "default",
		archivetest.Message("alice@alpha.test", []string{"bob@beta.test"}, nil, "first", "one", day),
		archivetest.Message("bob@beta.test", []string{"alice@alpha.test"}, nil, "second", "two", day.AddDate(0, 0, 1)),
	)
	for _, q := range []string{".", "-", "@", `"`, "*", "\x00", "^", "()", ":", "+", "_", "@._-", " ", "\u00ad", "\u200b"} {
		msgs, total, err := f.arc.Search(ctx, archive.Query{Tenant: "default", Text: q})
		require.NoError(t, err, "q=%q", q)
		assert.Equal(t, 2, total, "q=%q: got total %d; want every message", q, total)
		assert.Len(t, msgs, 2, "q=%q", q)
		msgs, total, err = f.arc.Search(ctx, archive.Query{Tenant: "default", Text: q, From: "bob@beta.test"})
		require.NoError(t, err, "q=%q with from", q)
		require.Len(t, msgs, 1, "q=%q with from: the other filter still applies", q)
		assert.Equal(t, 1, total)
		assert.Equal(t, "second", msgs[0].Subject)
	}
}

func testTenants(t *testing.T, d database.Dialect) {
	f := newFixture(t, d)
	ctx := context.Background()
	raw := archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "tenant secret", "body", time.Now())
	a := f.store(t, "acme", raw)
	b := f.store(t, "globex", raw)
	assert.False(t, b[0].Duplicate, "the same message in another tenant is not a duplicate")
	_, err := f.arc.Get(ctx, "globex", a[0].ID)
	assert.True(t, errors.Is(err, archive.ErrNotFound), "another tenant's message; got %v", err)
	msgs, _, err := f.arc.Search(ctx, archive.Query{Tenant: "globex", Text: "secret"})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Equal(t, b[0].ID, msgs[0].ID)
	assert.True(t, strings.HasPrefix(archive.MessageKey("acme", 1), "acme/"))
}
