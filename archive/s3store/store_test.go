package s3store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/blobstoretest"
	"github.com/mailledger/mailledger/archive/s3store"
)

func TestS3StoreConformance(t *testing.T) {
	for _, subdirs := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged/subdirs=%v", subdirs), func(t *testing.T) {
			blobstoretest.Run(t, func(t *testing.T) archive.BlobStore {
				cfg := testConfig(t)
				cfg.UseSubdirs = subdirs
				return open(t, cfg)
			})
		})
		t.Run(fmt.Sprintf("uploaded/subdirs=%v", subdirs), func(t *testing.T) {
			blobstoretest.Run(t, func(t *testing.T) archive.BlobStore {
				cfg := testConfig(t)
				cfg.UseSubdirs = subdirs
				return uploadedStore{open(t, cfg)}
			})
		})
	}
}

func TestS3StoreGetWhileStagedAndAfterUpload(t *testing.T) {
	ctx := context.Background()
	bad := testConfig(t)
	bad.Hostname = "127.0.0.1:1" // nothing listens: the file stays staged
	s := open(t, bad)
	key := archive.MessageKey(blobstoretest.Tenant(t), 77)
	require.NoError(t, s.Put(ctx, key, []byte("staged")))
	got, err := s.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "staged", string(got))
	assert.True(t, staged(bad, key))
	info, err := os.Stat(filepath.Join(bad.Dir, filepath.FromSlash(key)))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "staged files are the service's only")
	require.NoError(t, s.Close())

	good := testConfig(t)
	good.Dir = bad.Dir
	s2 := open(t, good)
	waitUploaded(t, s2)
	assert.False(t, staged(good, key), "the staged file is removed once uploaded")
	got, err = s2.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "staged", string(got))
}

// A crash between staging and upload: the first store is stopped before it can upload
// (its store does not answer); a new store over the same staging directory uploads the
// file once, and it reads back.
func TestS3StoreCrashBeforeUploadLosesNothing(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	first, err := s3store.NewPaused(cfg) // the uploader stopped before it uploads
	require.NoError(t, err)
	tenant := blobstoretest.Tenant(t)
	key := archive.MessageKey(tenant, 1234)
	require.NoError(t, first.Put(ctx, key, []byte("kept")))
	require.NoError(t, first.Close())
	require.True(t, staged(cfg, key))

	second := open(t, cfg)
	waitUploaded(t, second)
	assert.False(t, staged(cfg, key))
	names, err := second.ObjectNames(ctx, tenant)
	require.NoError(t, err)
	assert.Equal(t, []string{"1234.m"}, names, "uploaded once")
	got, err := second.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "kept", string(got))
}

// A crash after the upload but before the staged file was removed: the restart uploads
// the same file again over the same object, which ends as one object, the same bytes.
func TestS3StoreCrashAfterUploadUploadsTheSameAgain(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	tenant := blobstoretest.Tenant(t)
	key := archive.MessageKey(tenant, 9)
	staging, err := archive.NewLocalStore(cfg.Dir)
	require.NoError(t, err)
	require.NoError(t, staging.Put(ctx, key, []byte("twice")))
	probe := open(t, cfg)
	require.NoError(t, probe.Upload(ctx, key, []byte("twice")))
	waitUploaded(t, probe)
	names, err := probe.ObjectNames(ctx, tenant)
	require.NoError(t, err)
	assert.Equal(t, []string{"9.m"}, names)
	assert.False(t, staged(cfg, key))
	got, err := probe.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "twice", string(got))
}

// The remover deletes an uploaded staged file after the worker has moved on; a Put of the
// same key in between renamed a new file over it, which must stay staged until its own
// upload, and be what the store then holds.
func TestS3StoreRemoverKeepsAFileStagedAgainMeanwhile(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	tenant := blobstoretest.Tenant(t)
	key := archive.MessageKey(tenant, 11)
	s, err := s3store.NewPaused(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })

	require.NoError(t, s.Put(ctx, key, []byte("first")))
	fi, err := s.UploadStaged(ctx, key)
	require.NoError(t, err)
	require.NotNil(t, fi)
	require.NoError(t, s.Put(ctx, key, []byte("second")))
	s.RemoveStaged(key, fi)
	assert.True(t, staged(cfg, key), "the file staged after the upload stays")
	got, err := s.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "second", string(got))

	s.Resume()
	waitUploaded(t, s)
	assert.False(t, staged(cfg, key), "its own upload removed it")
	got, err = s.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "second", string(got), "read from the store")

	// The file the remover is handed is gone once WaitUploaded returns.
	fi, err = s.UploadStaged(ctx, key)
	require.NoError(t, err)
	assert.Nil(t, fi, "nothing staged: nothing uploaded, nothing to remove")
}

func TestS3StoreDeleteStagedAndUploaded(t *testing.T) {
	ctx := context.Background()
	tenant := blobstoretest.Tenant(t)
	cfg := testConfig(t)
	paused, err := s3store.NewPaused(cfg)
	require.NoError(t, err)
	stagedKey := archive.MessageKey(tenant, 1)
	require.NoError(t, paused.Put(ctx, stagedKey, []byte("a")))
	require.True(t, staged(cfg, stagedKey))
	require.NoError(t, paused.Delete(ctx, stagedKey))
	assert.False(t, staged(cfg, stagedKey))
	_, err = paused.Get(ctx, stagedKey)
	assert.ErrorIs(t, err, archive.ErrBlobNotFound)
	paused.Resume()
	waitUploaded(t, paused)
	require.NoError(t, paused.Close())

	up := open(t, cfg)
	key := archive.MessageKey(tenant, 2)
	require.NoError(t, up.Put(ctx, key, []byte("b")))
	waitUploaded(t, up)
	require.False(t, staged(cfg, key))
	require.NoError(t, up.Delete(ctx, key))
	_, err = up.Get(ctx, key)
	assert.ErrorIs(t, err, archive.ErrBlobNotFound)
	names, err := up.ObjectNames(ctx, tenant)
	require.NoError(t, err)
	assert.Empty(t, names, "neither the deleted staged file nor the uploaded one is in the bucket")
}

// A Delete while the store does not answer fails (the purge retries it), and the staged
// file is gone all the same.
func TestS3StoreDeleteFailsWhileTheStoreIsDown(t *testing.T) {
	ctx := context.Background()
	down := testConfig(t)
	down.Hostname = "127.0.0.1:1"
	s, err := s3store.NewPaused(down)
	require.NoError(t, err)
	defer s.Close()
	key := archive.MessageKey(blobstoretest.Tenant(t), 3)
	require.NoError(t, s.Put(ctx, key, []byte("c")))
	assert.Error(t, s.Delete(ctx, key))
	assert.False(t, staged(down, key))
}

func TestS3StoreConcurrentPutsFourThreads(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.Threads = 4
	cfg.UseSubdirs = true
	s := open(t, cfg)
	tenant := blobstoretest.Tenant(t)
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			assert.NoError(t, s.Put(ctx, archive.MessageKey(tenant, int64(i)), []byte(fmt.Sprint("m", i))))
		})
	}
	wg.Wait()
	waitUploaded(t, s)
	names, err := s.ObjectNames(ctx, tenant)
	require.NoError(t, err)
	assert.Len(t, names, 200)
	for i := range 200 {
		key := archive.MessageKey(tenant, int64(i))
		assert.False(t, staged(cfg, key), key)
		got, err := s.Get(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint("m", i), string(got))
	}
}

// A commit's batch (archive.BatchStore): the files are staged durably together, read back
// while staged, and uploaded once the batch returned; a store that cannot upload keeps
// them staged for the next start.
func TestS3StoreBatchStagesThenUploads(t *testing.T) {
	ctx := context.Background()
	bad := testConfig(t)
	bad.Hostname = "127.0.0.1:1" // nothing listens: the files stay staged
	s := open(t, bad)
	tenant := blobstoretest.Tenant(t)
	var keys []string
	b := s.NewBatch(ctx)
	for id := int64(1); id <= 20; id++ {
		key := archive.MessageKey(tenant, id*300) // over several folders
		keys = append(keys, key)
		b.Add(key, []byte(fmt.Sprint("file ", id)))
	}
	require.NoError(t, b.Wait())
	for i, key := range keys {
		require.True(t, staged(bad, key), key)
		got, err := s.Get(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint("file ", i+1), string(got))
	}
	require.NoError(t, s.Close())

	good := testConfig(t)
	good.Dir = bad.Dir
	s2 := open(t, good)
	b = s2.NewBatch(ctx)
	more := archive.MessageKey(tenant, 99999)
	b.Add(more, []byte("queued by the batch"))
	require.NoError(t, b.Wait())
	waitUploaded(t, s2)
	names, err := s2.ObjectNames(ctx, tenant)
	require.NoError(t, err)
	assert.Len(t, names, 21, "the earlier batch after the restart, the new one once it returned")
	for _, key := range append(keys, more) {
		assert.False(t, staged(good, key), "removed from staging once uploaded: %s", key)
	}
	got, err := s2.Get(ctx, more)
	require.NoError(t, err)
	assert.Equal(t, "queued by the batch", string(got))
}

func TestS3StoreBatchRefusesABadKey(t *testing.T) {
	cfg := testConfig(t)
	cfg.Hostname = "127.0.0.1:1"
	s := open(t, cfg)
	b := s.NewBatch(context.Background())
	b.Add("../outside", []byte("x"))
	require.ErrorIs(t, b.Wait(), archive.ErrBadKey)
	entries, err := os.ReadDir(cfg.Dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing staged")
}
