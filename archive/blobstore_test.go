package archive_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
)

func TestLocalStorePutBatchAndKeys(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, err := archive.NewLocalStore(root)
	require.NoError(t, err)
	files := map[string][]byte{}
	for id := int64(250); id < 262; id++ {
		files[archive.MessageKey("acme", id)] = []byte{byte(id)}
	}
	require.NoError(t, s.PutBatch(ctx, files))
	for key, want := range files {
		got, err := s.Get(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, want, got, key)
	}
	assert.Equal(t, "acme/00/00/255.m", archive.MessageKey("acme", 255))
	assert.Equal(t, "acme/00/01/256.m", archive.MessageKey("acme", 256))
	assert.Equal(t, "acme/01/00/65536.m", archive.MessageKey("acme", 65536))
	leftovers, _ := filepath.Glob(filepath.Join(root, "acme", "*", "*", ".put-*"))
	assert.Empty(t, leftovers, "no temporary files stay behind")
	var listed []string
	require.NoError(t, s.List(ctx, "acme", func(k string) error { listed = append(listed, k); return nil }))
	assert.Len(t, listed, len(files))
	_, err = s.Get(ctx, "../etc/passwd")
	assert.ErrorIs(t, err, archive.ErrBadKey)
	require.NoError(t, s.Delete(ctx, archive.MessageKey("acme", 250)))
	_, err = os.Stat(filepath.Join(root, "acme", "00", "00", "250.m"))
	assert.True(t, os.IsNotExist(err))
}

// DeleteIfSame removes the file GetFile read and nothing written under its key since:
// s3store removes an uploaded staged file with it, after a Put of the same key may have
// staged a new one.
func TestLocalStoreDeleteIfSameKeepsAFileWrittenSince(t *testing.T) {
	ctx := context.Background()
	s, err := archive.NewLocalStore(t.TempDir())
	require.NoError(t, err)
	key := archive.MessageKey("acme", 7)

	require.NoError(t, s.Put(ctx, key, []byte("first")))
	data, fi, err := s.GetFile(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "first", string(data))
	assert.EqualValues(t, 5, fi.Size())

	require.NoError(t, s.Put(ctx, key, []byte("first"))) // the same bytes, a new file
	removed, err := s.DeleteIfSame(ctx, key, fi)
	require.NoError(t, err)
	assert.False(t, removed, "a file renamed over the one read stays")
	got, err := s.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "first", string(got))

	_, fi, err = s.GetFile(ctx, key)
	require.NoError(t, err)
	removed, err = s.DeleteIfSame(ctx, key, fi)
	require.NoError(t, err)
	assert.True(t, removed)
	_, err = s.Get(ctx, key)
	assert.ErrorIs(t, err, archive.ErrBlobNotFound)

	removed, err = s.DeleteIfSame(ctx, key, fi)
	require.NoError(t, err, "a file already gone is no error")
	assert.False(t, removed)
	_, _, err = s.GetFile(ctx, key)
	assert.ErrorIs(t, err, archive.ErrBlobNotFound)
	_, _, err = s.GetFile(ctx, "../etc/passwd")
	assert.ErrorIs(t, err, archive.ErrBadKey)
}
