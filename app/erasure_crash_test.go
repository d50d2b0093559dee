package app_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/migrations"
)

// crashEnv names the variables that turn the test binary into the executor child.
const (
	crashChildEnv   = "MAILLEDGER_ERASURE_CRASH_CHILD"
	crashDataDirEnv = "MAILLEDGER_ERASURE_CRASH_DIR"
	crashBatch      = 1
)

// TestErasureExecutorCrash kills the executor with SIGKILL at random points of an
// erasure, ten times, then restarts it: the request completes with the right count, no
// email of the scope is skipped and none under hold is touched.
func TestErasureExecutorCrash(t *testing.T) {
	if os.Getenv(crashChildEnv) == "1" {
		runCrashChild(t)
		return
	}
	dir := t.TempDir()
	f := openCrashFixture(t, dir)
	mails := archivetest.GenerateMail(rand.New(rand.NewSource(17)), 400, erasurePool, mailStart)
	ids := f.archiveMail("acme", mails)
	subject := []string{"alice@alpha.test", "carol@beta.test"}
	req := f.create("acme", subject...)
	f.drain()
	_, err := f.er.Approve(f.ctx, "acme", req.RequestID, actor("approver"))
	require.NoError(t, err)
	_, err = f.er.Execute(f.ctx, "acme", req.RequestID, actor("approver"))
	require.NoError(t, err)
	// A hold placed once the execution started: the executor must leave its mail alone.
	held := holdSpec{"address", "erin@gamma.test"}
	f.placeHold("acme", held.typ, held.value)
	f.drained, err = headSize(f)
	require.NoError(t, err)

	var want []int64
	for i, m := range mails {
		if involves(m, subject) && !held.covers(m) {
			want = append(want, ids[i])
		}
	}
	require.Greater(t, len(want), 30, "scope too small to crash inside")
	retainedBefore := f.retained(ids)

	rng := rand.New(rand.NewSource(23))
	midway := 0
	for run := range 10 {
		done := f.killChildAt(dir, rng, len(want))
		t.Logf("run %d: killed with %d of %d erased", run, done, len(want))
		if done > 0 && done < len(want) {
			midway++
		}
	}
	assert.Positive(t, midway, "no kill landed in the middle of the erasure")

	f.drainExecution(req.RequestID)
	v := f.get("acme", req.RequestID)
	assert.Equal(t, erasure.StatusCompleted, v.Status)
	assert.Equal(t, len(want), v.DeletedCount, "deleted count after the crashes")
	marks := f.erasedBy(ids)
	after := f.retained(ids)
	for i, id := range ids {
		switch {
		case contains(want, id):
			assert.Equal(t, req.RequestID, marks[id], "message %d skipped", id)
		default:
			assert.Empty(t, marks[id], "message %d outside the scope or held was erased", id)
			assert.Equal(t, retainedBefore[id], after[id], "retention of untouched message %d (held: %v)", id, held.covers(mails[i]))
		}
	}
	assert.Equal(t, 1, f.completions(req.RequestID), "completion events")
	key, err := eventstore.LoadOrCreateKey(t.TempDir(), "crash-test")
	require.NoError(t, err)
	_, err = f.store.Verify(f.ctx, key.PublicKey, nil)
	assert.NoError(t, err, "the ledger verifies after the crashes")
}

func openCrashFixture(t *testing.T, dir string) *erasureFixture {
	t.Helper()
	db, err := database.Open("sqlite://" + filepath.Join(dir, "mailledger.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.NoError(t, migrations.Up(t.Context(), db))
	return openErasureFixture(t, db, dir, app.ErasureConfig{EraseBatch: crashBatch})
}

func headSize(f *erasureFixture) (int64, error) {
	h, err := f.store.Head(f.ctx)
	return h.Size, err
}

// killChildAt starts the executor child and kills it with SIGKILL at a random point:
// after a random delay (possibly before it erased anything), or once a random number of
// further messages is erased, while it works on the next batch. It returns how many
// messages were erased by then.
func (f *erasureFixture) killChildAt(dir string, rng *rand.Rand, total int) int {
	f.t.Helper()
	done := f.erasedCount()
	target := done + 1 + rng.Intn(max(1, (total-done)/3))
	byTime := rng.Intn(4) == 0
	cmd := exec.Command(os.Args[0], "-test.run=^TestErasureExecutorCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"=1", crashDataDirEnv+"="+dir)
	require.NoError(f.t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(time.Duration(rng.Intn(60)) * time.Millisecond)
	for {
		select {
		case <-exited:
			return f.erasedCount()
		case <-deadline:
			if byTime {
				return f.kill(cmd, exited)
			}
		case <-time.After(time.Millisecond):
		}
		if !byTime && f.erasedCount() >= target {
			return f.kill(cmd, exited)
		}
	}
}

func (f *erasureFixture) kill(cmd *exec.Cmd, exited chan error) int {
	_ = cmd.Process.Kill() // SIGKILL
	<-exited
	return f.erasedCount()
}

func (f *erasureFixture) erasedCount() int {
	var n int
	require.NoError(f.t, f.db.QueryRow(`SELECT COUNT(*) FROM metadata WHERE erased_by IS NOT NULL`).Scan(&n))
	return n
}

// runCrashChild is the child: the executor, delivered the request's execution_started
// event as after a restart, erasing in batches of crashBatch.
func runCrashChild(t *testing.T) {
	f := openCrashFixture(t, os.Getenv(crashDataDirEnv))
	recs, err := f.store.ReadAll(context.Background(), 0, 1000)
	require.NoError(t, err)
	for _, rec := range recs {
		require.NoError(t, f.er.HandleExecution(f.ctx, rec))
	}
}

// drainExecution delivers the request's execution_started event in this process.
func (f *erasureFixture) drainExecution(requestID string) {
	f.t.Helper()
	recs, err := f.store.Load(f.ctx, erasure.StreamID(requestID))
	require.NoError(f.t, err)
	for _, rec := range recs {
		require.NoError(f.t, f.er.HandleExecution(f.ctx, rec))
	}
}

func (f *erasureFixture) retained(ids []int64) map[int64]string {
	f.t.Helper()
	out := map[int64]string{}
	for _, id := range ids {
		var v any
		require.NoError(f.t, f.db.QueryRow(`SELECT retained FROM metadata WHERE id = ?`, id).Scan(&v))
		out[id] = fmt.Sprint(v)
	}
	return out
}

func (f *erasureFixture) completions(requestID string) int {
	f.t.Helper()
	recs, err := f.store.Load(f.ctx, erasure.StreamID(requestID))
	require.NoError(f.t, err)
	n := 0
	for _, r := range recs {
		if r.EventType == erasure.EventExecutionCompleted {
			n++
		}
	}
	return n
}
