package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

var testSent = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// smallConfig is a run small enough for a test, on a corpus made of generated messages.
func smallConfig(t *testing.T, extra ...string) *config {
	t.Helper()
	args := append([]string{"-messages", "12", "-search-messages", "150", "-search-queries", "6",
		"-search-batch", "40", "-search-addresses", "8", "-tmpdir", t.TempDir(), "-corpus", testCorpus(t)}, extra...)
	cfg, err := parseFlags(args, io.Discard)
	require.NoError(t, err)
	return cfg
}

// testCorpus writes three messages (one starting with an mbox From line, one with CRLF
// line ends), a README.md and a file that is no message into a directory.
func testCorpus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{
		"a.eml":     archivetest.Message("a@example.org", []string{"b@example.org"}, nil, "first", "one", testSent),
		"sub/b.eml": []byte("From a@example.org Sun Mar  1 10:00:00 2026\nFrom: a@example.org\nTo: c@example.org\nSubject: second\n\ntwo\n"),
		"c.eml":     archivetest.WithAttachment("c@example.org", "a@example.org", "third", "three", "x.bin", []byte("data"), testSent),
		"README.md": []byte("# not a message\n"),
		"notes.txt": []byte("just some notes, no header block\n"),
	}
	for name, data := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
	return dir
}

func TestLoadCorpusSkipsWhatTheParserRejects(t *testing.T) {
	seeds, skipped, err := loadCorpus(testCorpus(t))
	require.NoError(t, err)
	var names []string
	for _, s := range seeds {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"a.eml", "c.eml", "sub/b.eml"}, names)
	require.Len(t, skipped, 1, "README.md is not read at all; notes.txt is rejected")
	assert.Equal(t, "notes.txt", skipped[0].Name)
	assert.ErrorIs(t, skipped[0].Reason, archive.ErrNotMessage)
}

func TestReplicateWritesDistinctFiles(t *testing.T) {
	seeds, _, err := loadCorpus(testCorpus(t))
	require.NoError(t, err)
	dir := t.TempDir()
	files, total, err := replicate(seeds, 7, dir)
	require.NoError(t, err)
	require.Len(t, files, 7)
	digests := map[[32]byte]bool{}
	var sum int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		digests[sha256.Sum256(b)] = true
		sum += int64(len(b))
	}
	assert.Len(t, digests, 7, "every copy is distinct")
	assert.Equal(t, sum, total)
}

func TestPlainCopyCopiesEveryFile(t *testing.T) {
	seeds, _, err := loadCorpus(testCorpus(t))
	require.NoError(t, err)
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	files, _, err := replicate(seeds, 5, src)
	require.NoError(t, err)
	took, err := plainCopy(files, dst, 2)
	require.NoError(t, err)
	assert.Positive(t, took)
	for _, f := range files {
		want, err := os.ReadFile(f)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dst, filepath.Base(f)))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "%s copied byte for byte", f)
	}
}

// TestImportBenchmarkImportsEveryCopy runs the import benchmark on a small replica: every
// copy is imported once, and the timings are filled in.
func TestImportBenchmarkImportsEveryCopy(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		cfg := smallConfig(t)
		cfg.urls = map[database.Dialect]string{d: serverURL(t, d)}
		seeds, _, err := loadCorpus(cfg.corpus)
		require.NoError(t, err)
		work := t.TempDir()
		rep := replica{dir: filepath.Join(work, "src")}
		require.NoError(t, os.Mkdir(rep.dir, 0o700))
		rep.files, rep.bytes, err = replicate(seeds, cfg.messages, rep.dir)
		require.NoError(t, err)
		res, err := runImport(context.Background(), cfg, d, rep, work)
		require.NoError(t, err)
		assert.Equal(t, cfg.messages, res.report.Imported)
		assert.Equal(t, rep.bytes, res.report.Bytes)
		assert.Positive(t, res.importRate())
		assert.Positive(t, res.copyRate())
	})
}

// TestSearchBenchmarkCountsWhatTheGeneratorMade checks that the timed searches are real:
// every query's total equals the count of generated messages it should match.
func TestSearchBenchmarkCountsWhatTheGeneratorMade(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		cfg := smallConfig(t)
		cfg.urls = map[database.Dialect]string{d: serverURL(t, d)}
		syn := newSynthetic(cfg.searchAddresses)
		res, err := runSearch(context.Background(), cfg, syn, d, t.TempDir())
		require.NoError(t, err)
		require.Len(t, res.queries, len(queryKinds)*cfg.searchQueries)
		msgs := make([]genMessage, cfg.searchMessages)
		for i := range msgs {
			msgs[i] = syn.message(i)
		}
		found := 0
		for _, q := range res.queries {
			want := 0
			for _, m := range msgs {
				if q.matches(m) {
					want++
				}
			}
			assert.Equal(t, want, q.total, "%s query %+v", q.kind, q)
			assert.Equal(t, min(want, searchLimit), q.returned, "%s query: page size", q.kind)
			assert.Positive(t, q.latency)
			found += q.total
		}
		assert.Positive(t, found, "some queries find messages")
	})
}

// serverURL is the admin URL the benchmark creates its database on (none for SQLite).
func serverURL(t *testing.T, d database.Dialect) string {
	t.Helper()
	if d == database.SQLite {
		return ""
	}
	_ = dbtest.URL(t, d) // skips (or fails under CI) when the server is not configured
	return os.Getenv(map[database.Dialect]string{database.Postgres: "TEST_POSTGRES_URL", database.MySQL: "TEST_MYSQL_URL"}[d])
}
