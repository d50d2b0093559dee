package archive_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strconv"
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

func TestImportCorpus(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		files := archivetest.CorpusFiles(t)
		var progressed int
		im := &archive.Importer{Archive: f.arc, Workers: 2, BatchSize: 16, Progress: func(done, total int) {
			progressed = done
			assert.Equal(t, len(files), total)
		}}
		rep, err := im.Import(ctx, "default", []string{archivetest.CorpusDir(t)})
		require.NoError(t, err)
		assert.Equal(t, len(files), rep.Imported+rep.Duplicates+rep.Failed, "every file is imported, a duplicate or reported")
		assert.Equal(t, len(files), progressed)
		for _, fail := range rep.Failures {
			assert.True(t, strings.HasPrefix(fail.Source, archivetest.CorpusDir(t)), "a failure names its file: %s", fail)
			t.Logf("reported: %s", fail)
		}
		assert.LessOrEqual(t, rep.Failed, 2, "the corpus is mail; only non-messages may fail")

		distinct := map[[32]byte]bool{}
		for _, p := range files {
			raw, _ := os.ReadFile(p)
			distinct[sha256.Sum256(raw)] = true
		}
		assert.Equal(t, len(distinct)-rep.Failed, rep.Imported, "duplicates are stored once")

		again, err := im.Import(ctx, "default", []string{archivetest.CorpusDir(t)})
		require.NoError(t, err)
		assert.Equal(t, 0, again.Imported, "a second import stores nothing new")
		assert.Equal(t, rep.Imported+rep.Duplicates, again.Duplicates)
	})
}

// TestImportDefaultBatchByDialect: an import left to its default commits 1,000 messages a
// transaction on SQLite and 200 elsewhere (Archive.ImportBatch; docs/performance.md,
// "SQLite: one segment a batch"). Progress is called once a batch.
func TestImportDefaultBatchByDialect(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		dir := t.TempDir()
		sent := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		const files = 1001
		for i := range files {
			raw := archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "batch "+strconv.Itoa(i), "body\n", sent)
			require.NoError(t, os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".eml"), raw, 0o600))
		}
		var calls, last int
		im := &archive.Importer{Archive: f.arc, Workers: 2, Progress: func(done, _ int) { calls, last = calls+1, done }}
		rep, err := im.Import(context.Background(), "default", []string{dir})
		require.NoError(t, err)
		assert.Equal(t, files, rep.Imported)
		want := map[database.Dialect]int{database.SQLite: 1000}[d]
		if want == 0 {
			want = 200
		}
		assert.Equal(t, want, f.arc.ImportBatch())
		assert.Equal(t, (files+want-1)/want, calls, "batches of %d", want)
		assert.Equal(t, files, last)
	})
}

func TestImportMboxAndMaildir(t *testing.T) {
	f := newFixture(t, database.SQLite)
	dir := t.TempDir()
	sent := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m1 := archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "one", "first\nFrom the start\n", sent)
	m2 := archivetest.Message("c@x.test", []string{"d@y.test"}, nil, "two", "second", sent)
	quoted := strings.ReplaceAll(string(m1), "\nFrom the start", "\n>From the start")
	mbox := "From a@x.test Fri Jan  2 03:04:05 2026\n" + quoted + "\nFrom c@x.test Fri Jan  2 03:04:05 2026\n" + string(m2) + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "box.mbox"), []byte(mbox), 0o600))
	md := filepath.Join(dir, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		require.NoError(t, os.MkdirAll(filepath.Join(md, sub), 0o700))
	}
	m3 := archivetest.Message("e@x.test", []string{"f@y.test"}, nil, "three", "third", sent)
	require.NoError(t, os.WriteFile(filepath.Join(md, "new", "1.host"), m3, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(md, "tmp", "2.host"), []byte("half delivered"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "junk.eml"), []byte("\x00\x01 not mail"), 0o600))

	rep, err := (&archive.Importer{Archive: f.arc}).Import(context.Background(), "default", []string{dir})
	require.NoError(t, err)
	assert.Equal(t, "imported 3, duplicates 0, failed 1", rep.Summary())
	require.Len(t, rep.Failures, 1)
	assert.Contains(t, rep.Failures[0].Source, "junk.eml")

	msgs, _, err := f.arc.Search(context.Background(), archive.Query{Tenant: "default", Text: "one"})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	raw, err := f.arc.Raw(context.Background(), "default", msgs[0].ID)
	require.NoError(t, err)
	assert.Equal(t, string(m1), string(raw), "an mbox message is stored without its From_ line, >From unquoted")
}

// TestImportSmallMemoryBounds: with the queue and batch byte bounds far below the size of
// one message, the import neither stalls nor loses anything: messages go through one at a
// time and every one is committed.
func TestImportSmallMemoryBounds(t *testing.T) {
	f := newFixture(t, database.SQLite)
	dir := t.TempDir()
	sent := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 30 {
		m := archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "n"+strconv.Itoa(i), strings.Repeat("body ", 200), sent)
		require.NoError(t, os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".eml"), m, 0o600))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Queue bound alone (batches wait for 8 messages), then both bounds.
	for i, im := range []*archive.Importer{
		{Archive: f.arc, Workers: 2, BatchSize: 8, MaxQueuedBytes: 100},
		{Archive: f.arc, Workers: 2, BatchSize: 8, MaxQueuedBytes: 100, MaxBatchBytes: 100},
	} {
		rep, err := im.Import(ctx, "default", []string{dir})
		require.NoError(t, err, "no stall: the import finished before the deadline")
		if i == 0 {
			assert.Equal(t, 30, rep.Imported)
		} else {
			assert.Equal(t, 30, rep.Duplicates, "the second run finds them all")
		}
		assert.Equal(t, 0, rep.Failed)
	}
	var rows int
	require.NoError(t, f.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM metadata`).Scan(&rows))
	assert.Equal(t, 30, rows)
}

// TestImportCommittersStoreEachMessageOnce: with several batches committing at once, a
// message whose copy sits in another batch in flight is still stored once. Every message
// is followed by its copy one batch later, so that both batches are committed at the same
// time; on MySQL and PostgreSQL the second transaction's insert then waits for the first
// and fails on the digest's unique key, and the batch is tried again.
func TestImportCommittersStoreEachMessageOnce(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		const batch, distinct = 4, 48
		sent := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		var mbox strings.Builder
		for i := 0; i < distinct; i += batch {
			for range 2 {
				for k := i; k < i+batch; k++ {
					m := archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "n"+strconv.Itoa(k), "body "+strconv.Itoa(k), sent)
					mbox.WriteString("From a@x.test Fri Jan  2 03:04:05 2026\n" + string(m) + "\n")
				}
			}
		}
		path := filepath.Join(t.TempDir(), "twice.mbox")
		require.NoError(t, os.WriteFile(path, []byte(mbox.String()), 0o600))
		var shown []int
		im := &archive.Importer{Archive: f.arc, Workers: 2, BatchSize: batch, Committers: 4,
			Progress: func(done, total int) { shown = append(shown, done) }}
		rep, err := im.Import(ctx, "default", []string{path})
		require.NoError(t, err)
		assert.Equal(t, 0, rep.Failed, "%v", rep.Failures)
		assert.Equal(t, distinct, rep.Imported)
		assert.Equal(t, distinct, rep.Duplicates)
		assert.Len(t, rep.IDs, distinct)
		assert.IsNonDecreasing(t, shown, "the progress never goes back")
		require.NotEmpty(t, shown)
		assert.Equal(t, 1, shown[len(shown)-1], "one mbox: one file done")

		var rows, distinctDigests int
		require.NoError(t, f.db.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT digest) FROM metadata`).Scan(&rows, &distinctDigests))
		assert.Equal(t, distinct, rows)
		assert.Equal(t, distinct, distinctDigests)
		for k := 0; k < distinct; k += 7 {
			msgs, _, err := f.arc.Search(ctx, archive.Query{Tenant: "default", Text: "n" + strconv.Itoa(k)})
			require.NoError(t, err)
			assert.Len(t, msgs, 1, "n%d is found once", k)
		}
	})
}

// TestCommittersByDatabase: two commits at once on MySQL only; SQLite has one writer.
func TestCommittersByDatabase(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		want := map[database.Dialect]int{database.SQLite: 1, database.Postgres: 1, database.MySQL: 2}[d]
		assert.Equal(t, want, newFixture(t, d).arc.Committers())
	})
}

// TestImportKeepsWhatItReleases: between parsing and its commit an import keeps only what
// the commit reads (Prepared.release drops the original bytes, the body text and the decoded
// attachments). Each message still reads back byte for byte, its attachment whole, its
// words searchable, and the report counts the bytes of the files.
func TestImportKeepsWhatItReleases(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		dir := t.TempDir()
		raws := map[string][]byte{}
		var total int64
		for i := range 5 {
			word := "releaseword" + strconv.Itoa(i)
			content := strings.Repeat(word+" attachment line\n", 40)
			sent := time.Date(2026, 1, 2, 3, 4, i, 0, time.UTC)
			raw := archivetest.WithAttachment("a@x.test", "b@y.test", "kept "+word, "body of "+word, word+".txt", []byte(content), sent)
			require.NoError(t, os.WriteFile(filepath.Join(dir, word+".eml"), raw, 0o600))
			raws[word] = raw
			total += int64(len(raw))
		}
		rep, err := (&archive.Importer{Archive: f.arc, Workers: 2, BatchSize: 2}).Import(ctx, "default", []string{dir})
		require.NoError(t, err)
		require.Equal(t, 5, rep.Imported)
		assert.Equal(t, total, rep.Bytes)
		for word, raw := range raws {
			msgs, _, err := f.arc.Search(ctx, archive.Query{Tenant: "default", Text: word})
			require.NoError(t, err)
			require.Len(t, msgs, 1, word)
			id := msgs[0].ID
			got, err := f.arc.Raw(ctx, "default", id)
			require.NoError(t, err)
			assert.Equal(t, raw, got)
			body, err := f.arc.Body(ctx, "default", id, "")
			require.NoError(t, err)
			assert.Equal(t, "body of "+word, strings.TrimSpace(body.Text))
			require.Len(t, body.Attachments, 1)
			att, err := f.arc.Attachment(ctx, "default", id, "", 1)
			require.NoError(t, err)
			want := strings.Repeat(word+" attachment line\n", 40)
			assert.Equal(t, want, string(att.Content))
			assert.Equal(t, len(want), body.Attachments[0].Size)
			assert.Equal(t, sha256.Sum256([]byte(want)), body.Attachments[0].Digest)
		}
	})
}
