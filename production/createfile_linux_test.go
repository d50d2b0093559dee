//go:build linux

package production

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCreateBeneathStaysInside: files are created below the directory; a path that climbs
// out, an absolute path or one through a symbolic link (even one pointing inside) is
// refused, and nothing appears outside.
func TestCreateBeneathStaysInside(t *testing.T) {
	base := t.TempDir()
	inside, outside := filepath.Join(base, "job"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(inside, "NATIVES"), 0o750))
	require.NoError(t, os.Mkdir(outside, 0o750))
	require.NoError(t, os.Symlink(outside, filepath.Join(inside, "out")))
	require.NoError(t, os.Symlink("NATIVES", filepath.Join(inside, "in")))
	dir, err := os.Open(inside)
	require.NoError(t, err)
	defer dir.Close()

	f, err := createBeneath(dir, "NATIVES/a.eml", 0o640)
	require.NoError(t, err)
	_, err = f.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, err := os.ReadFile(filepath.Join(inside, "NATIVES", "a.eml"))
	require.NoError(t, err)
	assert.Equal(t, "x", string(got))
	info, err := os.Stat(filepath.Join(inside, "NATIVES", "a.eml"))
	require.NoError(t, err)
	assert.Zero(t, info.Mode().Perm()&^0o640, "no permission beyond 0640")

	_, err = createBeneath(dir, "NATIVES/a.eml", 0o640)
	assert.ErrorIs(t, err, os.ErrExist, "an existing file is never overwritten")
	for _, bad := range []string{"../outside/x", "out/x", "in/x", filepath.Join(outside, "abs")} {
		_, err := createBeneath(dir, bad, 0o640)
		assert.Error(t, err, bad)
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written outside")
}
