// Package blobstoretest is the conformance suite of archive.BlobStore: every store (the
// local file store, the S3 store) runs Run, so they behave alike to the archive.
package blobstoretest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
)

// NewStore returns a store for one subtest; the suite uses tenants of its own, so the
// stores of several subtests may share one backend.
type NewStore func(t *testing.T) archive.BlobStore

// Run runs every behaviour of the suite as a subtest.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		run  func(t *testing.T, s archive.BlobStore, tenant string)
	}{
		{"PutGet", testPutGet},
		{"Overwrite", testOverwrite},
		{"GetMissing", testGetMissing},
		{"Delete", testDelete},
		{"List", testList},
		{"BadKeys", testBadKeys},
		{"ConcurrentPuts", testConcurrentPuts},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newStore(t), Tenant(t))
		})
	}
}

// Tenant returns a tenant name no other test uses: lower-case letters and digits, a
// valid bucket name.
func Tenant(t *testing.T) string {
	b := make([]byte, 6)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return "t" + hex.EncodeToString(b)
}

func testPutGet(t *testing.T, s archive.BlobStore, tenant string) {
	ctx := context.Background()
	for _, id := range []int64{1, 255, 256, 65536, 1 << 40} {
		key := archive.MessageKey(tenant, id)
		data := []byte(fmt.Sprintf("message %d", id))
		require.NoError(t, s.Put(ctx, key, data))
		got, err := s.Get(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, data, got, key)
	}
	empty := archive.MessageKey(tenant, 7)
	require.NoError(t, s.Put(ctx, empty, []byte{}))
	got, err := s.Get(ctx, empty)
	require.NoError(t, err)
	assert.Empty(t, got)
}

func testOverwrite(t *testing.T, s archive.BlobStore, tenant string) {
	ctx := context.Background()
	key := archive.MessageKey(tenant, 42)
	require.NoError(t, s.Put(ctx, key, []byte("first")))
	require.NoError(t, s.Put(ctx, key, []byte("second")))
	got, err := s.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "second", string(got))
}

func testGetMissing(t *testing.T, s archive.BlobStore, tenant string) {
	_, err := s.Get(context.Background(), archive.MessageKey(tenant, 99))
	assert.ErrorIs(t, err, archive.ErrBlobNotFound)
}

func testDelete(t *testing.T, s archive.BlobStore, tenant string) {
	ctx := context.Background()
	key := archive.MessageKey(tenant, 5)
	require.NoError(t, s.Put(ctx, key, []byte("x")))
	require.NoError(t, s.Delete(ctx, key))
	_, err := s.Get(ctx, key)
	assert.ErrorIs(t, err, archive.ErrBlobNotFound)
	assert.NoError(t, s.Delete(ctx, key), "a second delete is no error")
	assert.NoError(t, s.Delete(ctx, archive.MessageKey(tenant, 6)), "nor is a delete of nothing")
}

func testList(t *testing.T, s archive.BlobStore, tenant string) {
	ctx := context.Background()
	var want []string
	for _, id := range []int64{1, 2, 300, 70000} {
		key := archive.MessageKey(tenant, id)
		require.NoError(t, s.Put(ctx, key, []byte{byte(id)}))
		want = append(want, key)
	}
	slices.Sort(want)
	assert.Equal(t, want, list(t, s, tenant))
	assert.Equal(t, want, list(t, s, tenant+"/"))
	assert.Equal(t, want[:3], list(t, s, tenant+"/00"), "a folder of the key")
	assert.Empty(t, list(t, s, tenant+"x"), "another tenant's name that starts alike")
	all := list(t, s, "")
	for _, k := range want {
		assert.Contains(t, all, k)
	}
}

func list(t *testing.T, s archive.BlobStore, prefix string) []string {
	var got []string
	require.NoError(t, s.List(context.Background(), prefix, func(k string) error {
		got = append(got, k)
		return nil
	}))
	slices.Sort(got)
	return got
}

func testBadKeys(t *testing.T, s archive.BlobStore, tenant string) {
	ctx := context.Background()
	for _, key := range []string{"../etc/passwd", "/etc/passwd", tenant + "/../x.m", "", tenant + "/00/00/a b.m"} {
		assert.ErrorIs(t, s.Put(ctx, key, []byte("x")), archive.ErrBadKey, key)
		_, err := s.Get(ctx, key)
		assert.ErrorIs(t, err, archive.ErrBadKey, key)
		assert.ErrorIs(t, s.Delete(ctx, key), archive.ErrBadKey, key)
	}
}

func testConcurrentPuts(t *testing.T, s archive.BlobStore, tenant string) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.Put(ctx, archive.MessageKey(tenant, int64(i)), []byte(fmt.Sprint(i)))
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, i)
		got, err := s.Get(ctx, archive.MessageKey(tenant, int64(i)))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(i), string(got))
	}
	assert.Len(t, list(t, s, tenant), len(errs))
}
