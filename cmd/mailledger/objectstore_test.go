package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// s3Env adds the object store of TEST_S3_ENDPOINT to env, or skips (fails under CI=true).
func s3Env(t *testing.T, env map[string]string) {
	t.Helper()
	endpoint := os.Getenv("TEST_S3_ENDPOINT")
	if endpoint == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TEST_S3_ENDPOINT is not set; .ci/run starts versitygw and sets it")
		}
		fmt.Fprintf(os.Stderr, "SKIP: %s: TEST_S3_ENDPOINT not set; this test needs an S3 server\n", t.Name())
		t.Skip("SKIP: TEST_S3_ENDPOINT not set")
	}
	env["S3_HOSTNAME"] = endpoint
	env["S3_SECURE"] = "0"
	env["S3_ACCESS_KEY"] = os.Getenv("TEST_S3_ACCESS_KEY")
	env["S3_SECRET_KEY"] = os.Getenv("TEST_S3_SECRET_KEY")
	env["S3_DIR"] = filepath.Join(env["MAILLEDGER_DATA_DIR"], "s3-staging")
	env["S3_BUCKET_PREFIX"] = fmt.Sprintf("cmd%dt%d.", os.Getpid(), s3Tests.Add(1)) // buckets of this test's own
}

// s3Tests numbers the tests that use the object store, for their bucket prefixes.
var s3Tests atomic.Int64

// TestImportToTheObjectStoreThenLocalIsRefused: an import with S3_* set archives to the
// object store and records the mode; a later command without them stops with exit 2.
func TestImportToTheObjectStoreThenLocalIsRefused(t *testing.T) {
	env := baseEnv(t)
	s3Env(t, env)
	mail := filepath.Join(t.TempDir(), "one.eml")
	require.NoError(t, os.WriteFile(mail, []byte("From: a@x.test\r\nTo: b@y.test\r\nSubject: s3\r\n\r\nbody\r\n"), 0o600))
	r := runBinary(t, env, "import", mail)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "imported 1, duplicates 0, failed 0\n", r.stdout)
	assert.NotContains(t, r.stderr, env["S3_SECRET_KEY"], "the secret key is never logged")
	staged, err := filepath.Glob(filepath.Join(env["S3_DIR"], "default", "*", "*", "*.m"))
	require.NoError(t, err)
	assert.Empty(t, staged, "import waits for its uploads before it exits")

	for _, k := range []string{"S3_HOSTNAME", "S3_SECURE", "S3_ACCESS_KEY", "S3_SECRET_KEY", "S3_DIR", "S3_BUCKET_PREFIX"} {
		delete(env, k)
	}
	r = runBinary(t, env, "import", mail)
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "mixed storage mode is not supported")
}

func TestSpreadInBucketsIsRefused(t *testing.T) {
	env := baseEnv(t)
	env["S3_SPREAD_IN_BUCKETS"] = "1"
	r := runBinary(t, env, "migrate")
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "s3_spread_in_buckets is obsolete")
}
