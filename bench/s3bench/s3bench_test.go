package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 4, 16}, cfg.threads)
	assert.Equal(t, database.SQLite, cfg.dialect)
	assert.True(t, cfg.wants("upload") && cfg.wants("import"))
	for _, bad := range [][]string{{"-objects", "0"}, {"-threads", "1,x"}, {"-threads", "0"}, {"-messages", "0"},
		{"-dialect", "sqlite,postgres"}, {"-import-threads", "0"}, {"-no-such-flag"}} {
		_, err := parseFlags(bad, io.Discard)
		assert.Error(t, err, "%v", bad)
	}
}

// TestRunUploadsAndImportsEverything runs the whole benchmark with tiny sizes against
// the S3 server of TEST_S3_ENDPOINT: every object is uploaded and counted back (run
// checks it), both imports take every copy.
func TestRunUploadsAndImportsEverything(t *testing.T) {
	requireS3(t)
	cfg, err := parseFlags([]string{"-objects", "12", "-threads", "1,3", "-messages", "10", "-strict",
		"-tmpdir", t.TempDir(), "-corpus", testCorpus(t)}, io.Discard)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), cfg, &out), out.String())
	assert.Contains(t, out.String(), "S3 mode / local files = ")
	for _, leg := range []string{"plain", "sums", "checked", "drain", "store", "batched"} {
		assert.Contains(t, out.String(), "    "+leg+" ", "every leg reported")
	}
	assert.Contains(t, out.String(), "(imported 10, duplicates 0, failed 0)")
	assert.NotContains(t, out.String(), "SKIP")
}

// requireS3 skips with a SKIP line without TEST_S3_ENDPOINT, or fails under CI=true.
func requireS3(t *testing.T) {
	t.Helper()
	if os.Getenv("TEST_S3_ENDPOINT") != "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("TEST_S3_ENDPOINT is not set; .ci/run starts versitygw and sets it")
	}
	fmt.Fprintf(os.Stderr, "SKIP: %s: TEST_S3_ENDPOINT not set; this test needs an S3 server\n", t.Name())
	t.Skip("SKIP: TEST_S3_ENDPOINT not set")
}

// testCorpus writes two messages, one of them starting with an mbox From line, and a
// README.md into a directory.
func testCorpus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sent := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	files := map[string][]byte{
		"a.eml":     archivetest.WithAttachment("c@example.org", "a@example.org", "first", "one", "x.bin", []byte("data"), sent),
		"b.eml":     []byte("From a@example.org Sun Mar  1 10:00:00 2026\nFrom: a@example.org\nTo: c@example.org\nSubject: second\n\ntwo\n"),
		"README.md": []byte("# not a message\n"),
	}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
	return dir
}
