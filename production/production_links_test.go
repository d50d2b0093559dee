package production_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/production"
)

// linkCase is DIR_EXPORT beside a directory "elsewhere" that must never be written,
// read or emptied through a symbolic link planted in DIR_EXPORT.
type linkCase struct {
	t         *testing.T
	root      string // DIR_EXPORT
	elsewhere string
	job       string // the job directory's path
}

func newLinkCase(t *testing.T) *linkCase {
	base := t.TempDir()
	c := &linkCase{t: t, root: filepath.Join(base, "export"), elsewhere: filepath.Join(base, "elsewhere")}
	c.job = filepath.Join(c.root, "acme", "ediscovery", testJob)
	require.NoError(t, os.MkdirAll(c.elsewhere, 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(c.elsewhere, "keep.txt"), []byte("keep"), 0o600))
	return c
}

func (c *linkCase) link(target, at string) {
	require.NoError(c.t, os.MkdirAll(filepath.Dir(at), 0o750))
	require.NoError(c.t, os.Symlink(target, at))
}

// untouched checks that elsewhere still holds only keep.txt, unchanged.
func (c *linkCase) untouched() {
	entries, err := os.ReadDir(c.elsewhere)
	require.NoError(c.t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(c.t, []string{"keep.txt"}, names, "nothing written or removed outside DIR_EXPORT")
	b, err := os.ReadFile(filepath.Join(c.elsewhere, "keep.txt"))
	require.NoError(c.t, err)
	assert.Equal(c.t, "keep", string(b))
}

var linkConfig = production.Config{Prefix: "L", Digits: 3, Natives: true, ByCustodian: true, CSV: true, DateFormat: "iso8601"}

// TestProductionRefusesLinkedDirectories: a symbolic link at the tenant folder, the
// ediscovery folder or the job directory makes the production fail with
// ErrLinkRefused, before anything is written through it.
func TestProductionRefusesLinkedDirectories(t *testing.T) {
	for _, at := range []string{"acme", "acme/ediscovery", "acme/ediscovery/" + testJob} {
		t.Run(at, func(t *testing.T) {
			c := newLinkCase(t)
			c.link(c.elsewhere, filepath.Join(c.root, filepath.FromSlash(at)))
			_, err := production.Create(c.root, "acme", testJob, linkConfig)
			require.ErrorIs(t, err, production.ErrLinkRefused)
			assert.Contains(t, err.Error(), "symbolic link")
			c.untouched()
		})
	}
}

// TestProductionRefusesLinkedFolderAndFile: a link planted while the job runs, at a
// custodian folder or at a file name, fails the production; nothing is written outside.
func TestProductionRefusesLinkedFolderAndFile(t *testing.T) {
	for _, tc := range []struct{ name, at string }{
		{"custodian folder", "bob@y.test"},
		{"native folder", "bob@y.test/NATIVES"},
		{"file", "bob@y.test/NATIVES/L_002.eml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newLinkCase(t)
			p, err := production.Create(c.root, "acme", testJob, linkConfig)
			require.NoError(t, err)
			_, err = p.Add(1, document(1, "raw one", &archive.Parsed{From: "ann@x.test"}))
			require.NoError(t, err)
			c.link(filepath.Join(c.elsewhere, "target"), filepath.Join(c.job, filepath.FromSlash(tc.at)))
			_, err = p.Add(2, document(2, "raw two", &archive.Parsed{From: "bob@y.test"}))
			if err == nil {
				_, err = p.Close()
			}
			require.Error(t, err, "the production fails")
			require.NoError(t, p.Abort())
			assert.NoDirExists(t, c.job, "the aborted job is removed")
			c.untouched()
		})
	}
}

// TestRemoveProductionRemovesOnlyLinks: deleting a job removes a link planted at the job
// directory or inside it, never what it points to.
func TestRemoveProductionRemovesOnlyLinks(t *testing.T) {
	t.Run("job directory", func(t *testing.T) {
		c := newLinkCase(t)
		c.link(c.elsewhere, c.job)
		require.NoError(t, production.Remove(c.root, "acme", testJob))
		_, err := os.Lstat(c.job)
		assert.ErrorIs(t, err, os.ErrNotExist, "the link is removed")
		c.untouched()
	})
	t.Run("inside", func(t *testing.T) {
		c := newLinkCase(t)
		require.NoError(t, os.MkdirAll(filepath.Join(c.job, "NATIVES"), 0o750))
		c.link(c.elsewhere, filepath.Join(c.job, "NATIVES", "dir"))
		c.link(filepath.Join(c.elsewhere, "keep.txt"), filepath.Join(c.job, "file"))
		require.NoError(t, production.Remove(c.root, "acme", testJob))
		assert.NoDirExists(t, c.job)
		c.untouched()
	})
	t.Run("tenant folder", func(t *testing.T) {
		c := newLinkCase(t)
		require.NoError(t, os.MkdirAll(filepath.Join(c.elsewhere, "ediscovery", testJob), 0o750))
		c.link(c.elsewhere, filepath.Join(c.root, "acme"))
		err := production.Remove(c.root, "acme", testJob)
		assert.ErrorIs(t, err, production.ErrLinkRefused)
		assert.DirExists(t, filepath.Join(c.elsewhere, "ediscovery", testJob), "not removed through the link")
	})
}

// TestProductionZipRefusesLinks: the download of a job directory that is a link is
// refused; a link inside it is left out of the ZIP and the manifest.
func TestProductionZipRefusesLinks(t *testing.T) {
	ctx := context.Background()
	c := newLinkCase(t)
	c.link(c.elsewhere, c.job)
	_, err := production.WriteZip(ctx, c.root, "acme", testJob, &bytes.Buffer{})
	assert.ErrorIs(t, err, production.ErrLinkRefused)
	_, err = production.ReadManifest(ctx, c.root, "acme", testJob)
	assert.ErrorIs(t, err, production.ErrLinkRefused)

	require.NoError(t, os.Remove(c.job))
	p, err := production.Create(c.root, "acme", testJob, linkConfig)
	require.NoError(t, err)
	_, err = p.Add(1, document(1, "raw one", &archive.Parsed{From: "ann@x.test"}))
	require.NoError(t, err)
	_, err = p.Close()
	require.NoError(t, err)
	c.link(filepath.Join(c.elsewhere, "keep.txt"), filepath.Join(c.job, "secret.txt"))
	c.link(c.elsewhere, filepath.Join(c.job, "ann@x.test", "more"))
	m, err := production.ReadManifest(ctx, c.root, "acme", testJob)
	require.NoError(t, err)
	assert.Equal(t, p.Manifest(), m, "links are not part of the production")
	var buf bytes.Buffer
	_, err = production.WriteZip(ctx, c.root, "acme", testJob, &buf)
	require.NoError(t, err)
	assert.NotContains(t, buf.String(), "keep", "nothing read through a link")
	assert.NoError(t, production.Check(c.root, "acme", testJob))
	require.NoError(t, os.RemoveAll(c.job))
	assert.ErrorIs(t, production.Check(c.root, "acme", testJob), os.ErrNotExist)
	c.link(c.elsewhere, c.job)
	assert.ErrorIs(t, production.Check(c.root, "acme", testJob), production.ErrLinkRefused)
	c.untouched()
}
