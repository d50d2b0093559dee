package main

import (
	"context"
	"io"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// benchDialects are the databases the generator supports.
var benchDialects = []database.Dialect{database.SQLite, database.Postgres}

// smallConfig is a run small enough for a test; the erase batch of 7 makes Erase read
// its scope in several pages (20 batches each).
func smallConfig(t *testing.T) *config {
	t.Helper()
	cfg, err := parseFlags([]string{"-messages", "3000", "-addresses", "300", "-subject-messages", "200",
		"-holds", "30", "-runs", "2", "-warmup", "1", "-execute-messages", "1500", "-execute-subject", "400",
		"-erase-batch", "7", "-tmpdir", t.TempDir()}, io.Discard)
	require.NoError(t, err)
	return cfg
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 1000000, cfg.messages, "the issue's 1,000,000 metadata rows")
	assert.Equal(t, 100000, cfg.execSubject, "the issue's 100,000 affected emails")
	assert.GreaterOrEqual(t, cfg.runs, 20, "median and p95 over at least 20 runs")
	assert.Equal(t, benchDialects, cfg.assessDialects)
	assert.Equal(t, benchDialects, cfg.executeDialects)
	assert.True(t, cfg.wants("assess") && cfg.wants("execute"))

	for _, bad := range [][]string{
		{"-dialects", "sqlite,mysql"}, {"-execute-dialects", "oracle"}, {"-runs", "0"}, {"-addresses", "10"},
		{"-messages", "100", "-subject-messages", "60"}, {"-execute-messages", "10", "-execute-subject", "11"},
		{"-run", "nothing"}, {"-no-such-flag"},
	} {
		_, err := parseFlags(bad, io.Discard)
		assert.Error(t, err, "%v", bad)
	}
}

// TestWorldHoldsMissTheSubject checks the premise of the "not blocked" case: no active
// hold names a sender, recipient or domain of the subject's mail, while the blocking hold
// names one of a visible message.
func TestWorldHoldsMissTheSubject(t *testing.T) {
	w := newWorld(smallConfig(t).assessShape())
	require.Len(t, w.subject, 200)
	var visible []string
	for _, m := range w.subject {
		assert.Zero(t, m.id%int64(w.stride), "subject message ids are multiples of the stride")
		names := []string{m.from, domainOf(m.from)}
		for _, r := range m.rcpts {
			names = append(names, r.to, domainOf(r.to))
		}
		for _, h := range w.holds {
			if h.status == "active" {
				assert.NotContains(t, names, h.value, "active hold %s covers message %d", h.id, m.id)
			}
		}
		if m.hidden == "" {
			visible = append(visible, names...)
		}
	}
	assert.Contains(t, visible, blockingHold.value)
	want := w.expected()
	assert.Less(t, want.Affected, len(w.subject), "some of the subject's messages are purged or erased")
	assert.Positive(t, want.AsSender)
	assert.Positive(t, want.AsRecipient)
	assert.Less(t, want.AsSender+want.AsRecipient-want.Affected, want.Affected, "some messages count as both")
	assert.True(t, slices.ContainsFunc(w.holds, func(h holdRow) bool { return h.status == "released" && h.value == blockingHold.value }),
		"a released hold on the same address does not block")
}

// TestAssessmentMatchesTheGenerator loads a small assessment world and checks the shape
// of the data and that the assessor and the bare queries count what was generated.
func TestAssessmentMatchesTheGenerator(t *testing.T) {
	for _, d := range benchDialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			cfg := smallConfig(t)
			db := dbtest.Open(t, d)
			var res assessResult
			require.NoError(t, assessOn(ctx, cfg, db, &res))
			assert.Equal(t, cfg.messages, count(t, db, `SELECT COUNT(*) FROM metadata`))
			assert.Equal(t, cfg.messages, count(t, db, `SELECT COUNT(DISTINCT id) FROM rcpt`), "every message has recipients")
			rcpts := count(t, db, `SELECT COUNT(*) FROM rcpt`) - res.world.rcptRows()
			background := cfg.messages - len(res.world.subject)
			assert.True(t, rcpts > background && rcpts < 3*background, "1 to 3 recipients per background message, %d in all", rcpts)
			in := `IN ('` + strings.Join(subjectAddresses, `', '`) + `')`
			mail := `SELECT COUNT(*) FROM metadata WHERE "from" ` + in + ` OR id IN (SELECT id FROM rcpt WHERE "to" ` + in + `)`
			assert.Equal(t, len(res.world.subject), count(t, db, mail), "the subject's messages, hidden ones included")
			assert.Equal(t, cfg.holds+1, count(t, db, `SELECT COUNT(*) FROM legal_holds`))
			assert.Zero(t, count(t, db, `SELECT COUNT(*) FROM metadata WHERE digest = '' OR msgdate IS NULL OR arrived > retained`))
			require.Len(t, res.cases, 2)
			for _, c := range res.cases {
				require.NoError(t, c.correct(res.world))
				assert.Len(t, c.assessorTimes, cfg.runs)
				assert.Len(t, c.bareTimes, cfg.runs)
			}
		})
	}
}

// TestExecutionErasesTheSubjectsMail runs the execution benchmark small: every message of
// the subject erased, exactly its index rows gone, the other messages untouched.
func TestExecutionErasesTheSubjectsMail(t *testing.T) {
	for _, d := range benchDialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			cfg := smallConfig(t)
			db := dbtest.Open(t, d)
			var res executeResult
			require.NoError(t, executeOn(ctx, cfg, db, &res))
			assert.Equal(t, cfg.execMessages, res.indexBefore, "every message is indexed")
			require.NoError(t, res.correct())
			assert.Equal(t, cfg.execSubject, res.erased)
			assert.Equal(t, cfg.execMessages-cfg.execSubject, count(t, db, `SELECT COUNT(*) FROM metadata WHERE erased_by IS NULL`))
		})
	}
}

func count(t *testing.T, db *database.DB, q string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(q).Scan(&n))
	return n
}

// TestAssessEqualsScopeAndBlockingHolds checks, on archived mail and on every database,
// that the one-statement Archive.Assess the benchmark times answers what Archive.Scope and
// Archive.BlockingHolds answer, with no hold, with released, address and domain holds.
func TestAssessEqualsScopeAndBlockingHolds(t *testing.T) {
	pool := []string{"ann@alpha.test", "bob@alpha.test", "cid@beta.test", "dan@beta.test", "eve@gamma.test", "fay@delta.test"}
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db := dbtest.Open(t, d)
		arc, err := newArchive(db, t.TempDir())
		require.NoError(t, err)
		var batch []*archive.Prepared
		for _, m := range archivetest.GenerateMail(rand.New(rand.NewSource(5)), 60, pool, time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)) {
			p, err := arc.Prepare(archive.Incoming{Tenant: benchTenant, Raw: m.Raw, Envelope: m.Envelope})
			require.NoError(t, err)
			batch = append(batch, p)
		}
		_, err = arc.Commit(ctx, batch)
		require.NoError(t, err)
		holds := []holdRow{
			{"LH-1", "address", "fay@delta.test", "released"}, {"LH-2", "domain", "gamma.test", "active"},
			{"LH-3", "address", "dan@beta.test", "active"}, {"LH-4", "domain", "nowhere.test", "active"},
		}
		for i := 0; i <= len(holds); i++ {
			if i > 0 {
				require.NoError(t, addHold(ctx, db, holds[i-1]))
			}
			for _, addrs := range [][]string{{"ann@alpha.test"}, {"cid@beta.test", "FAY@delta.test"}, {"nobody@nowhere.test"}} {
				scope, err := arc.Scope(ctx, benchTenant, addrs)
				require.NoError(t, err)
				want, reason, err := arc.BlockingHolds(ctx, benchTenant, addrs)
				require.NoError(t, err)
				gotScope, got, gotReason, err := arc.Assess(ctx, benchTenant, addrs)
				require.NoError(t, err)
				assert.Equal(t, scope, gotScope, "%v after %d holds", addrs, i)
				assert.Equal(t, want, got, "%v after %d holds", addrs, i)
				assert.Equal(t, reason, gotReason)
			}
		}
		_, got, _, err := arc.Assess(ctx, benchTenant, pool)
		require.NoError(t, err)
		assert.Len(t, got, 2, "LH-2 and LH-3 cover some of the pool's mail; LH-1 is released, LH-4 covers none")
	})
}
