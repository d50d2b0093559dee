package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 1_000_000, cfg.messages)
	assert.Equal(t, 100_000, cfg.step)
	assert.Equal(t, []database.Dialect{database.SQLite, database.Postgres, database.MySQL}, cfg.dialects)
	assert.Equal(t, []int{1, 8}, cfg.clients)
	assert.Equal(t, 1, cfg.searchEvery)
	for _, bad := range [][]string{
		{"-messages", "0"}, {"-messages", "10", "-step", "11"}, {"-step", "0"}, {"-search-every", "0"},
		{"-queries", "0"}, {"-clients", "1,x"}, {"-clients", "0"}, {"-dialects", "oracle"}, {"-workers", "-1"},
		{"-no-such-flag"}, {"-cpuprofile", "run.pprof", "-cpuprofile-steps", "steps"},
	} {
		_, err := parseFlags(bad, io.Discard)
		assert.Error(t, err, "%v", bad)
	}
}

func TestSearchAfter(t *testing.T) {
	t.Parallel()
	cfg := &config{searchEvery: 3}
	var got []int
	for k := range 10 {
		if cfg.searchAfter(k, 10) {
			got = append(got, k+1)
		}
	}
	assert.Equal(t, []int{3, 6, 9, 10}, got, "every third step and the last")
}

func TestCommandLineQuotes(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "go run ./bench/scalebench -messages 10 -mysql 'mysql://root@tcp(127.0.0.1:3306)/test'",
		commandLine([]string{"-messages", "10", "-mysql", "mysql://root@tcp(127.0.0.1:3306)/test"}))
}

// TestCheckAnswersCatchesWrongAnswers feeds the checks answers that are wrong in each way
// the oracle can tell.
func TestCheckAnswersCatchesWrongAnswers(t *testing.T) {
	t.Parallel()
	c := newCorpus(testGenerator(), newWordSet(), t.TempDir(), 400, 400)
	_, _, err := c.file(0)
	require.NoError(t, err)
	oracle := c.steps[0].oracle
	q := query{kind: kindFrom, from: 0, toDomain: -1}
	want := q.expected(c.ws, oracle)
	require.Positive(t, want)
	var right []archive.Message
	for i := 399; i >= 0 && len(right) < q.pageLen(want); i-- {
		if m := c.g.message(i); q.matches(c.g, m) {
			right = append(right, archive.Message{ID: int64(i + 1), MessageID: messageID(i, "x")[1:], Sent: &m.sent})
		}
	}
	check := func(total int, page []archive.Message) []string {
		return checkAnswers(c, oracle, []query{q}, levelResult{clients: 1, answers: []answer{{total: total, page: page}}}, true)
	}
	require.Len(t, right, min(want, pageSize))
	assert.Empty(t, check(want, sortedNewestFirst(right)), "the right answer")
	assert.Len(t, check(want+1, sortedNewestFirst(right)), 1, "a wrong total")
	assert.NotEmpty(t, check(want, right[1:]), "a short page")
	stranger := c.g.message(0)
	for k := 1; q.matches(c.g, stranger); k++ {
		stranger = c.g.message(k)
	}
	bad := append(sortedNewestFirst(right)[1:], archive.Message{MessageID: messageID(stranger.i, "x")[1:], Sent: &stranger.sent})
	assert.NotEmpty(t, check(want, bad), "a message that does not match")
}

func sortedNewestFirst(ms []archive.Message) []archive.Message {
	out := slices.Clone(ms)
	slices.SortFunc(out, func(a, b archive.Message) int { return b.Sent.Compare(*a.Sent) })
	return out
}

// TestTinyRunMatchesTheOracle runs the whole benchmark at a tiny scale on each database:
// every search total, page and assessment agrees with the generator's counts.
func TestTinyRunMatchesTheOracle(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		args := []string{"-messages", "360", "-step", "120", "-search-every", "2", "-queries", "2",
			"-clients", "1,3", "-assess-runs", "1", "-dialects", string(d), "-tmpdir", t.TempDir(), "-strict"}
		if d != database.SQLite {
			args = append(args, "-"+string(d), serverURL(t, d))
		}
		cfg, err := parseFlags(args, io.Discard)
		require.NoError(t, err)
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), cfg, &out), out.String())
		assert.Contains(t, out.String(), "every answer agreed with the generator")
		assert.Contains(t, out.String(), "search after step 2 (240 messages")
		assert.Contains(t, out.String(), "search after step 3 (360 messages", "the last step is always searched")
		if _, err := os.Stat("/proc/self/clear_refs"); err == nil {
			assert.Contains(t, out.String(), "peak RSS during the searches and assessments", "each search phase's memory")
		}
		assert.NotContains(t, out.String(), "search after step 1 ")
	})
}

func TestStepProfilesOnePerStep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "profiles")
	cfg, err := parseFlags([]string{"-messages", "240", "-step", "120", "-search-every", "100", "-queries", "1",
		"-clients", "1", "-assess-runs", "1", "-dialects", "sqlite", "-tmpdir", t.TempDir(), "-cpuprofile-steps", dir}, io.Discard)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), cfg, &out), out.String())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		info, err := e.Info()
		require.NoError(t, err)
		assert.Positive(t, info.Size(), "%s is a profile, not an empty file", e.Name())
	}
	assert.Equal(t, []string{"sqlite-step1.pprof", "sqlite-step2.pprof"}, names)
}

// serverURL is the admin URL the benchmark creates its database on.
func serverURL(t *testing.T, d database.Dialect) string {
	t.Helper()
	_ = dbtest.URL(t, d) // skips (or fails under CI) when the server is not configured
	return os.Getenv(map[database.Dialect]string{database.Postgres: "TEST_POSTGRES_URL", database.MySQL: "TEST_MYSQL_URL"}[d])
}

func TestPrintQueriesGivesSearchtimeArguments(t *testing.T) {
	g, ws := newGenerator(), newWordSet()
	var out strings.Builder
	printQueries(&out, g, ws, 2, 10)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 2*len(queryKinds))
	qs := newQueries(ws, 2, 10)
	for i, line := range lines {
		kind, arg, ok := strings.Cut(line, "\t")
		require.True(t, ok, line)
		assert.Equal(t, qs[i].kind, kind)
		f := strings.Split(arg, "|")
		aq := qs[i].archiveQuery(g)
		switch kind {
		case kindFrom:
			assert.Equal(t, []string{"from=" + aq.From}, f)
		case kindToDomain:
			assert.Equal(t, []string{"to=" + aq.To}, f)
		case kindDeepPage:
			assert.Equal(t, []string{aq.Text, "5000"}, f)
		case kindWindow, kindWordWindow:
			assert.Equal(t, []string{aq.Text, "0", aq.DateFrom.Format(time.DateOnly), "30"}, f)
		default:
			assert.Equal(t, []string{aq.Text}, f)
		}
	}
}
