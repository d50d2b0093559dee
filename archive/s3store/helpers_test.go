package s3store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/s3store"
)

// testConfig is the configuration of the S3 server of TEST_S3_ENDPOINT (host:port, no
// TLS) with TEST_S3_ACCESS_KEY and TEST_S3_SECRET_KEY, staging in a fresh directory.
// Without TEST_S3_ENDPOINT the test skips with a SKIP line, or fails under CI=true.
func testConfig(t *testing.T) s3store.Config {
	t.Helper()
	endpoint := os.Getenv("TEST_S3_ENDPOINT")
	if endpoint == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TEST_S3_ENDPOINT is not set; .ci/run starts versitygw and sets it")
		}
		fmt.Fprintf(os.Stderr, "SKIP: %s: TEST_S3_ENDPOINT not set; this test needs an S3 server (docs/operations.md)\n", t.Name())
		t.Skip("SKIP: TEST_S3_ENDPOINT not set")
	}
	return s3store.Config{
		Hostname:  endpoint,
		AccessKey: s3store.Secret(os.Getenv("TEST_S3_ACCESS_KEY")),
		SecretKey: s3store.Secret(os.Getenv("TEST_S3_SECRET_KEY")),
		Dir:       filepath.Join(t.TempDir(), "staging"),
		Threads:   4,
	}
}

// open starts a store on cfg and closes it at the end of the test.
func open(t *testing.T, cfg s3store.Config) *s3store.Store {
	t.Helper()
	s, err := s3store.New(cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// waitUploaded waits until s has uploaded everything staged, for at most a minute.
func waitUploaded(t *testing.T, s *s3store.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.WaitUploaded(ctx))
}

// staged reports whether key has a file in cfg's staging directory.
func staged(cfg s3store.Config, key string) bool {
	_, err := os.Stat(filepath.Join(cfg.Dir, filepath.FromSlash(key)))
	return err == nil
}

// uploadedStore is a store whose Put returns once the file is uploaded, so that the
// conformance suite reads from the object store rather than from staging.
type uploadedStore struct{ *s3store.Store }

func (u uploadedStore) Put(ctx context.Context, key string, data []byte) error {
	if err := u.Store.Put(ctx, key, data); err != nil {
		return err
	}
	return u.WaitUploaded(ctx)
}

var _ archive.BlobStore = uploadedStore{}
