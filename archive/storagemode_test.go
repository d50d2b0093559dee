package archive_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// objectStore stands in for the S3 store: local files that call themselves "s3".
type objectStore struct{ *archive.LocalStore }

func (objectStore) StorageMode() string { return "s3" }

func archiveOver(t *testing.T, db *database.DB, blobs archive.BlobStore) *archive.Archive {
	t.Helper()
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(t.TempDir(), "keys"))
	require.NoError(t, err)
	arc, err := archive.New(db, blobs, keys, archive.Options{})
	require.NoError(t, err)
	return arc
}

func commitOne(t *testing.T, arc *archive.Archive, subject string) error {
	t.Helper()
	p, err := arc.Prepare(archive.Incoming{Tenant: "acme", Raw: []byte("From: a@x.test\r\nSubject: " + subject + "\r\n\r\nbody\r\n")})
	require.NoError(t, err)
	_, err = arc.Commit(context.Background(), []*archive.Prepared{p})
	return err
}

// TestStorageModeMixedIsRefused: the first archived message records the storage mode;
// a later start (CheckStorageMode) or commit with the other mode is refused, on every
// database.
func TestStorageModeMixedIsRefused(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db := dbtest.Open(t, d)
		local, err := archive.NewLocalStore(t.TempDir())
		require.NoError(t, err)
		s3 := archiveOver(t, db, objectStore{local})
		require.NoError(t, archiveOver(t, db, local).CheckStorageMode(ctx), "an empty archive takes either mode")
		require.NoError(t, s3.CheckStorageMode(ctx))
		require.NoError(t, commitOne(t, s3, "first"))
		require.NoError(t, commitOne(t, s3, "second"))

		other := archiveOver(t, db, local)
		err = other.CheckStorageMode(ctx)
		require.ErrorIs(t, err, archive.ErrMixedStorage)
		assert.Contains(t, err.Error(), `stored in "s3" mode`)
		assert.ErrorIs(t, commitOne(t, other, "third"), archive.ErrMixedStorage)
		assert.NoError(t, archiveOver(t, db, objectStore{local}).CheckStorageMode(ctx))
	})
}

// TestStorageModeOfAnOlderArchiveIsLocal: an archive with messages and no recorded mode
// kept its files locally (the only mode before); the object store is refused.
func TestStorageModeOfAnOlderArchiveIsLocal(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t, database.SQLite)
	local, err := archive.NewLocalStore(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, commitOne(t, archiveOver(t, db, local), "old"))
	_, err = db.ExecContext(ctx, `DELETE FROM archive_settings`)
	require.NoError(t, err)
	assert.ErrorIs(t, archiveOver(t, db, objectStore{local}).CheckStorageMode(ctx), archive.ErrMixedStorage)
	assert.NoError(t, archiveOver(t, db, local).CheckStorageMode(ctx))
}
