package app_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain/export"
)

// TestExportRefusesPlantedLinks: a symbolic link planted in DIR_EXPORT at a job's
// directory fails the job with a message that says so, and nothing is written outside;
// a completed job whose directory was swapped for a link is not downloaded (410), and
// its delete removes the link only.
func TestExportRefusesPlantedLinks(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t, database.SQLite, app.ExportsConfig{})
	elsewhere := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "keep.txt"), []byte("keep"), 0o600))
	untouched := func() {
		entries, err := os.ReadDir(elsewhere)
		require.NoError(t, err)
		require.Len(t, entries, 1, "nothing written or removed outside DIR_EXPORT")
	}
	mail := f.archiveMail("acme", generated(3))

	planted := f.createExport("acme", request("LNK", mail))
	require.NoError(t, os.MkdirAll(filepath.Dir(f.jobDir(planted)), 0o750))
	require.NoError(t, os.Symlink(elsewhere, f.jobDir(planted)))
	f.start()
	v := f.awaitExport("acme", planted.JobID, export.StatusFailed, export.StatusCompleted)
	assert.Equal(t, export.StatusFailed, v.Status)
	require.NotNil(t, v.ErrorMessage)
	assert.Contains(t, *v.ErrorMessage, "symbolic link refused")
	untouched()

	done := f.createExport("acme", request("LNK", mail))
	f.awaitExport("acme", done.JobID, export.StatusCompleted)
	require.NoError(t, os.Rename(f.jobDir(done), filepath.Join(t.TempDir(), "moved")))
	require.NoError(t, os.Symlink(elsewhere, f.jobDir(done)))
	_, err := f.x.OpenDownload(f.ctx, "acme", done.JobID, actor("auditor"))
	assert.ErrorIs(t, err, app.ErrProductionMissing, "a linked job directory is not served")
	require.NoError(t, f.x.Delete(f.ctx, "acme", done.JobID, actor("auditor")))
	_, err = os.Lstat(f.jobDir(done))
	assert.ErrorIs(t, err, os.ErrNotExist, "the delete removed the link")
	untouched()
}
