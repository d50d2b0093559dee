package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 2000, cfg.messages)
	assert.Equal(t, 8, cfg.clients)
	assert.Equal(t, []database.Dialect{database.SQLite, database.Postgres}, cfg.dialects)
	assert.Equal(t, clientGoSMTP, cfg.client)
	for _, bad := range [][]string{{"-messages", "0"}, {"-clients", "0"}, {"-dialects", "oracle"}, {"-client", "telnet"}, {"-no-such-flag"}} {
		_, err := parseFlags(bad, io.Discard)
		assert.Error(t, err, "%v", bad)
	}
}

// TestRunSendsEveryMessageOnce runs the whole benchmark on a tiny corpus on each
// database: both paths archive every copy once (run checks it), and the report says so.
func TestRunSendsEveryMessageOnce(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		for _, client := range []string{clientPipelined, clientGoSMTP} {
			cfg, err := parseFlags([]string{"-messages", "30", "-clients", "3", "-dialects", string(d), "-strict",
				"-tmpdir", t.TempDir(), "-corpus", testCorpus(t), "-client", client}, io.Discard)
			require.NoError(t, err)
			cfg.urls = map[database.Dialect]string{d: serverURL(t, d)}
			var out bytes.Buffer
			require.NoError(t, run(context.Background(), cfg, &out), client)
			assert.Contains(t, out.String(), "smtp / import = ", client)
			assert.Contains(t, out.String(), "3 clients ("+client+")")
			assert.Contains(t, out.String(), "every message archived once on both: checked (rows = distinct digests = 30)", client)
			assert.NotContains(t, out.String(), "SKIP", client)
		}
	})
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

// serverURL is the admin URL the benchmark creates its databases on (none for SQLite).
func serverURL(t *testing.T, d database.Dialect) string {
	t.Helper()
	if d == database.SQLite {
		return ""
	}
	_ = dbtest.URL(t, d) // skips (or fails under CI) when the server is not configured
	return os.Getenv(map[database.Dialect]string{database.Postgres: "TEST_POSTGRES_URL", database.MySQL: "TEST_MYSQL_URL"}[d])
}

// TestDotStuffed: the pipelined client's DATA bytes are the message with CRLF line ends,
// a leading dot doubled and the "." line at the end.
func TestDotStuffed(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a\n.b\r\nc":       "a\r\n..b\r\nc\r\n.\r\n",
		"x\r\n":            "x\r\n.\r\n",
		".\r\n..\r\nend\n": "..\r\n...\r\nend\r\n.\r\n",
	} {
		got, err := dotStuffed([]byte(in))
		require.NoError(t, err)
		assert.Equal(t, want, string(got), "%q", in)
	}
}
