package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// previousRelease is the last commit before the analyzer: the archive it writes (its own
// search index, roles and dates) is what `reindex` upgrades.
const previousRelease = "5b4abd1"

var previous struct {
	once sync.Once
	bin  string
	err  error
}

// previousBinary builds the mailledger of previousRelease from this repository's history,
// once per test run. Without git or the commit (a shallow copy), it skips loudly; under
// CI=true it fails.
func previousBinary(t *testing.T) string {
	t.Helper()
	previous.once.Do(func() {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			previous.err = err
			return
		}
		if out, err := exec.Command("git", "-C", root, "cat-file", "-e", previousRelease+"^{commit}").CombinedOutput(); err != nil {
			previous.err = fmt.Errorf("commit %s not in this checkout: %v %s", previousRelease, err, out)
			return
		}
		dir, err := os.MkdirTemp(binaryDir, "previous-") // removed with binaryDir by TestMain
		if err != nil {
			previous.err = err
			return
		}
		extract := exec.Command("sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", root, previousRelease, dir)
		if out, err := extract.CombinedOutput(); err != nil {
			previous.err = fmt.Errorf("git archive %s: %v %s", previousRelease, err, out)
			return
		}
		previous.bin = filepath.Join(dir, "mailledger-previous")
		build := exec.Command("go", "build", "-o", previous.bin, "./cmd/mailledger")
		build.Dir = dir
		if out, err := build.CombinedOutput(); err != nil {
			previous.err = fmt.Errorf("build %s: %v %s", previousRelease, err, out)
		}
	})
	if previous.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the previous release cannot be built: %v", previous.err)
		}
		fmt.Fprintf(os.Stderr, "SKIP: %s: the previous release cannot be built: %v\n", t.Name(), previous.err)
		t.Skipf("SKIP: the previous release cannot be built: %v", previous.err)
	}
	return previous.bin
}

// TestReindexUpgradesThePreviousRelease: the corpus imported by the previous release, then
// migrated and reindexed by this one, answers every search, filter and erasure scope as
// the corpus imported by this one does, and has the same roles, dates and notes; the run
// is in the ledger, which still verifies.
func TestReindexUpgradesThePreviousRelease(t *testing.T) {
	old := previousBinary(t)
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		upgraded, fresh := baseEnv(t), baseEnv(t)
		upgraded["DATABASE_URL"], fresh["DATABASE_URL"] = dbtest.URL(t, d), dbtest.URL(t, d)
		corpus := archivetest.CorpusDir(t)
		r := runProgram(t, old, upgraded, "import", corpus)
		require.Equal(t, 1, r.code, "one corpus file is not mail: %s", r.stderr)
		r = runBinary(t, upgraded, "reindex")
		require.Equal(t, 0, r.code, "reindex: %s", r.stderr)
		assert.Equal(t, "reindexed 130 messages, 0 could not be read\n", r.stdout, "the 134 mail files hold 130 distinct messages")
		r = runBinary(t, fresh, "import", corpus)
		require.Equal(t, 1, r.code, "import: %s", r.stderr)

		a, b := openState(t, upgraded["DATABASE_URL"]), openState(t, fresh["DATABASE_URL"])
		assert.Equal(t, b.rows(t, `SELECT m.digest, r.role, r.addr FROM address_role r JOIN metadata m ON m.id = r.id`),
			a.rows(t, `SELECT m.digest, r.role, r.addr FROM address_role r JOIN metadata m ON m.id = r.id`), "roles")
		assert.Equal(t, b.rows(t, `SELECT digest, sent, parse_note, "from", fromdomain FROM metadata`),
			a.rows(t, `SELECT digest, sent, parse_note, "from", fromdomain FROM metadata`), "dates, notes and senders")
		assert.Equal(t, b.rows(t, `SELECT m.digest, r."to", r.todomain, r.kind FROM rcpt r JOIN metadata m ON m.id = r.id`),
			a.rows(t, `SELECT m.digest, r."to", r.todomain, r.kind FROM rcpt r JOIN metadata m ON m.id = r.id`), "recipients as shown")
		assert.Equal(t, []string{"0"}, a.rows(t, `SELECT COUNT(*) FROM metadata WHERE msgdate <> COALESCE(sent, arrived)`),
			"the message's date is its Date header, else its arrival")
		queries := b.corpusQueries(t)
		require.Greater(t, len(queries), 300)
		for _, q := range queries {
			assert.Equal(t, b.search(t, q), a.search(t, q), "%+v", q)
		}
		for _, addr := range b.column(t, `SELECT DISTINCT addr FROM address_role`) {
			sa, err := a.arc.Scope(context.Background(), "default", []string{addr})
			require.NoError(t, err)
			sb, err := b.arc.Scope(context.Background(), "default", []string{addr})
			require.NoError(t, err)
			assert.Equal(t, sb, sa, "scope of %s", addr)
		}
		assert.Equal(t, []string{"archive.reindexed|*"}, a.rows(t, `SELECT event_type, tenant_id FROM events WHERE event_type = 'archive.reindexed'`))
		r = runBinary(t, upgraded, "verify")
		assert.Equal(t, 0, r.code, "verify: %s", r.stderr)
	})
}

// archiveState is an archive opened from its database alone (searches, scopes and rows;
// no message file is read).
type archiveState struct {
	db  *database.DB
	arc *archive.Archive
}

func openState(t *testing.T, url string) archiveState {
	t.Helper()
	db, err := database.Open(url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	dir := t.TempDir()
	blobs, err := archive.NewLocalStore(filepath.Join(dir, "store"))
	require.NoError(t, err)
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	require.NoError(t, err)
	arc, err := archive.New(db, blobs, keys, archive.Options{})
	require.NoError(t, err)
	return archiveState{db: db, arc: arc}
}

// rows returns the rows of q, each as its columns joined by |, sorted.
func (s archiveState) rows(t *testing.T, q string) []string {
	t.Helper()
	rows, err := s.db.Query(q)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		parts := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	require.NoError(t, rows.Err())
	slices.Sort(out)
	return out
}

func (s archiveState) column(t *testing.T, q string) []string { return s.rows(t, q) }

// corpusQueries are the searches to compare: the first three words of every subject, each
// sender and recipient as from= and to=, and each domain as from=@ and to=@.
func (s archiveState) corpusQueries(t *testing.T) []archive.Query {
	t.Helper()
	var out []archive.Query
	for _, subject := range s.column(t, `SELECT DISTINCT subject FROM metadata`) {
		words := strings.Fields(subject)
		out = append(out, archive.Query{Text: strings.Join(words[:min(3, len(words))], " ")})
	}
	for _, addr := range s.column(t, `SELECT DISTINCT addr FROM address_role`) {
		out = append(out, archive.Query{From: addr}, archive.Query{To: addr})
	}
	for _, dom := range s.column(t, `SELECT DISTINCT domain FROM address_role`) {
		out = append(out, archive.Query{From: "@" + dom}, archive.Query{To: "@" + dom})
	}
	return out
}

// search returns the digests of the messages q finds.
func (s archiveState) search(t *testing.T, q archive.Query) []string {
	t.Helper()
	q.Tenant, q.Limit = "default", 500
	msgs, _, err := s.arc.Search(context.Background(), q)
	require.NoError(t, err, "%+v", q)
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Digest
	}
	slices.Sort(out)
	return out
}

// TestReindexResumesAfterKill9: `reindex` killed with SIGKILL part-way leaves its progress,
// and the next run resumes from it, says so, and counts the whole archive; search then
// finds every message by its own words.
func TestReindexResumesAfterKill9(t *testing.T) {
	const n = 4000
	env := baseEnv(t)
	env["DATABASE_URL"] = dbtest.URL(t, database.SQLite)
	dir := t.TempDir()
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		raw := archivetest.Message(fmt.Sprintf("s%d@x.test", i%50), []string{"r@y.test"}, nil,
			fmt.Sprintf("batch word%d", i), "a body of a few words to read", day.Add(time.Duration(i)*time.Minute))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%05d.eml", i)), raw, 0o600))
	}
	require.Equal(t, 0, runBinary(t, env, "import", dir).code)

	cmd := exec.Command(binary, "reindex")
	cmd.Env = envList(env)
	require.NoError(t, cmd.Start())
	st := openState(t, env["DATABASE_URL"])
	require.Eventually(t, func() bool {
		var last int64
		err := st.db.QueryRow(`SELECT last_id FROM reindex_state`).Scan(&last)
		return err == nil && last > 0
	}, time.Minute, 5*time.Millisecond, "reindex made no progress in a minute")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	var last int64
	require.NoError(t, st.db.QueryRow(`SELECT last_id FROM reindex_state`).Scan(&last), "the killed run left its progress")
	require.Less(t, last, int64(n), "killed before the end")

	r := runBinary(t, env, "reindex")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, fmt.Sprintf("reindexed %d messages, 0 could not be read (resumed an interrupted run)\n", n), r.stdout)
	for _, i := range []int{0, n / 2, n - 1} {
		assert.Len(t, st.search(t, archive.Query{Text: fmt.Sprintf("word%d", i)}), 1, "word%d", i)
	}
	assert.Equal(t, []string{"1"}, st.rows(t, `SELECT COUNT(*) FROM events WHERE event_type = 'archive.reindexed'`), "one event: the run that completed")
}
