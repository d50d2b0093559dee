package archive_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
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
)

// largeBody is about n bytes of text lines that compress, but not to nothing.
func largeBody(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %d of a long message, %x\r\n", i, i*2654435761)
	}
	return b.String()
}

// TestOpenRawStreams: OpenRawFor gives the original bytes of small and large (several
// zstd windows) messages, and refuses a changed, truncated or foreign file before any byte.
func TestOpenRawStreams(t *testing.T) {
	f := newFixture(t, database.SQLite)
	ctx := context.Background()
	small := archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "small", "body", time.Now())
	large := archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "large", largeBody(20<<20), time.Now())
	res := f.store(t, "default", small, large)
	for i, want := range [][]byte{small, large} {
		r, err := f.arc.OpenRawFor(ctx, "default", res[i].ID, "")
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		assert.Equal(t, int64(len(want)), r.Size)
		assert.True(t, bytes.Equal(want, got), "message %d: got %d bytes; want the original %d", i, len(got), len(want))
	}
	pathOf := func(i int) string {
		return filepath.Join(f.dataDir, "store", filepath.FromSlash(archive.MessageKey("default", res[i].ID)))
	}
	sealed, err := os.ReadFile(pathOf(1))
	require.NoError(t, err)
	other, err := os.ReadFile(pathOf(0))
	require.NoError(t, err)
	for name, content := range map[string][]byte{
		"flipped byte":           flip(sealed, len(sealed)/2),
		"flipped last byte":      flip(sealed, len(sealed)-gcmTag-1),
		"truncated":              sealed[:len(sealed)-gcmTag-100],
		"another message's file": other,
		"empty":                  {},
	} {
		require.NoError(t, os.WriteFile(pathOf(1), content, 0o600))
		_, err := f.arc.OpenRawFor(ctx, "default", res[1].ID, "")
		assert.ErrorIs(t, err, archive.ErrIntegrity, "%s: got %v", name, err)
	}

	require.NoError(t, os.WriteFile(pathOf(1), sealed, 0o600))
	r, err := f.arc.OpenRawFor(ctx, "default", res[1].ID, "")
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, os.WriteFile(pathOf(1), flip(sealed, len(sealed)-gcmTag-1), 0o600)) // changed while open
	_, err = io.Copy(io.Discard, r)
	assert.ErrorIs(t, err, archive.ErrIntegrity, "a file changed between the check and the read; got %v", err)
}

const gcmTag = 16

func flip(b []byte, i int) []byte {
	out := append([]byte{}, b...)
	out[i] ^= 0x01
	return out
}
