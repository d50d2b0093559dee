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
