package s3store_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/blobstoretest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestArchiveOverS3: the archive commits and reads messages through the S3 store, staged
// and uploaded, records the "s3" mode, and a start with the local store is refused.
func TestArchiveOverS3(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	s := open(t, cfg)
	db := dbtest.Open(t, database.SQLite)
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(t.TempDir(), "keys"))
	require.NoError(t, err)
	arc, err := archive.New(db, s, keys, archive.Options{})
	require.NoError(t, err)
	require.NoError(t, arc.CheckStorageMode(ctx))
	tenant := blobstoretest.Tenant(t)
	raw := []byte("From: a@x.test\r\nTo: b@y.test\r\nSubject: over s3\r\n\r\nbody\r\n")
	p, err := arc.Prepare(archive.Incoming{Tenant: tenant, Raw: raw})
	require.NoError(t, err)
	res, err := arc.Commit(ctx, []*archive.Prepared{p})
	require.NoError(t, err)
	got, err := arc.Raw(ctx, tenant, res[0].ID)
	require.NoError(t, err)
	assert.Equal(t, raw, got, "read while staged or uploaded")
	waitUploaded(t, s)
	r, err := arc.OpenRawFor(ctx, tenant, res[0].ID, "")
	require.NoError(t, err)
	got, err = io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	assert.Equal(t, raw, got, "read from the bucket")

	local, err := archive.NewLocalStore(t.TempDir())
	require.NoError(t, err)
	other, err := archive.New(db, local, keys, archive.Options{})
	require.NoError(t, err)
	assert.ErrorIs(t, other.CheckStorageMode(ctx), archive.ErrMixedStorage)
}
