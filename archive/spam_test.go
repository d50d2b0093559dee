package archive_test

import (
	"context"
	"fmt"
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

// spamFixture is an archive whose spam header line is "X-Spam-Flag: YES", with opts'
// spam policy.
func spamFixture(t *testing.T, d database.Dialect, opts archive.Options) *fixture {
	t.Helper()
	dir := t.TempDir()
	db := dbtest.Open(t, d)
	blobs, err := archive.NewLocalStore(filepath.Join(dir, "store"))
	require.NoError(t, err)
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	require.NoError(t, err)
	opts.SpamHeader = "X-Spam-Flag: YES"
	arc, err := archive.New(db, blobs, keys, opts)
	require.NoError(t, err)
	return &fixture{arc: arc, db: db, dataDir: dir}
}

func spamAndHam(t *testing.T) (spam, ham []byte) {
	t.Helper()
	sent := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ham = archivetest.Message("alice@example.com", []string{"bob@example.com"}, nil, "minutes", "the minutes of Monday", sent)
	spam = append([]byte("X-Spam-Flag: yes\r\n"), archivetest.Message("win@prize.example", []string{"bob@example.com"}, nil, "you won", "claim it", sent)...)
	return spam, ham
}

func TestSpamIsKeptWithItsOwnRetention(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		const year, week = 365 * 24 * time.Hour, 7 * 24 * time.Hour
		f := spamFixture(t, d, archive.Options{Retention: year, SpamRetention: week})
		spam, ham := spamAndHam(t)
		res := f.store(t, "acme", spam, ham)
		require.NotZero(t, res[0].ID)
		require.False(t, res[0].Discarded)
		ctx := context.Background()
		s, err := f.arc.Get(ctx, "acme", res[0].ID)
		require.NoError(t, err)
		h, err := f.arc.Get(ctx, "acme", res[1].ID)
		require.NoError(t, err)
		assert.True(t, s.Spam, "the header line marks it (the value compared without case)")
		assert.False(t, h.Spam)
		assert.WithinDuration(t, s.Arrived.Add(week), s.Retained, time.Second, "spam: SpamRetention")
		assert.WithinDuration(t, h.Arrived.Add(year), h.Retained, time.Second, "other mail: Retention")
	})
}

func TestSpamDiscardedIsNotStored(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := spamFixture(t, d, archive.Options{DiscardSpam: true})
		spam, ham := spamAndHam(t)
		res := f.store(t, "acme", spam, ham, spam)
		assert.Equal(t, archive.Result{Discarded: true}, res[0], "accepted, not stored, no id")
		assert.Equal(t, archive.Result{Discarded: true}, res[2], "a repeat is discarded again, not a duplicate")
		require.NotZero(t, res[1].ID)
		assert.False(t, res[1].Duplicate)
		msgs, total, err := f.arc.Search(context.Background(), archive.Query{Tenant: "acme"})
		require.NoError(t, err)
		assert.Equal(t, 1, total, "only the ham is in the archive")
		require.Len(t, msgs, 1)
		assert.Equal(t, res[1].ID, msgs[0].ID)

		dir := t.TempDir()
		require.NoError(t, writeFiles(dir, spam, ham))
		im := &archive.Importer{Archive: f.arc, Workers: 2, BatchSize: 4}
		rep, err := im.Import(context.Background(), "acme", []string{dir})
		require.NoError(t, err)
		assert.Equal(t, 1, rep.Discarded)
		assert.Equal(t, 1, rep.Duplicates)
		assert.Equal(t, "imported 0, duplicates 1, failed 0, spam discarded 1", rep.Summary())
	})
}

// writeFiles writes each message to its own .eml file under dir.
func writeFiles(dir string, raws ...[]byte) error {
	for i, raw := range raws {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%03d.eml", i)), raw, 0o600); err != nil {
			return err
		}
	}
	return nil
}
