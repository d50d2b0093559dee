package archive_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
)

// TestImportStopLeavesNoGoroutine: when an import cannot go on (its database is closed
// under it, or its caller cancels), Import returns the error and leaves none of its
// goroutines behind. The queues are kept small (one message a batch, two workers) so that
// the workers still hold prepared messages when the commit fails: before the workers
// selected on ctx.Done(), they stayed blocked on a queue nobody read.
//
// Not parallel: it reads the stacks of every goroutine of the test binary.
func TestImportStopLeavesNoGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name string
		// before runs before Import, progress after each committed batch.
		before, progress func(f *fixture, cancel context.CancelFunc)
		wantErr          string
	}{
		{name: "the database is closed", wantErr: "database is closed",
			before: func(f *fixture, _ context.CancelFunc) { _ = f.db.Close() }},
		{name: "the caller cancels", wantErr: context.Canceled.Error(),
			progress: func(_ *fixture, cancel context.CancelFunc) { cancel() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Empty(t, importerStacks(), "no importer goroutine runs before the import")
			f := newFixture(t, database.SQLite)
			dir := writeMessages(t, 40)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			im := &archive.Importer{Archive: f.arc, Workers: 2, BatchSize: 1}
			if tc.progress != nil {
				im.Progress = func(int, int) { tc.progress(f, cancel) }
			}
			if tc.before != nil {
				tc.before(f, cancel)
			}
			rep, err := im.Import(ctx, "default", []string{dir})
			require.Error(t, err, "the import could not go on; got %s", rep.Summary())
			assert.Contains(t, err.Error(), tc.wantErr)
			assertNoImporterGoroutine(t, 10*time.Second)
		})
	}
}

// writeMessages writes n distinct messages as .eml files into a new directory.
func writeMessages(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	sent := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range n {
		m := archivetest.Message("a@x.test", []string{"b@y.test"}, nil, "n"+strconv.Itoa(i), "body "+strconv.Itoa(i), sent)
		require.NoError(t, os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".eml"), m, 0o600))
	}
	return dir
}

// assertNoImporterGoroutine waits up to d for the importer's goroutines to end (a
// goroutine that got its cancellation may still be on its way out) and fails with their
// stacks if some are still there.
func assertNoImporterGoroutine(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for len(importerStacks()) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if left := importerStacks(); len(left) > 0 {
		t.Errorf("got %d importer goroutines %s after Import returned; want 0:\n\n%s", len(left), d, strings.Join(left, "\n\n"))
	}
}

// importerStacks gives the stack of each goroutine that runs the importer's code or was
// started by it.
func importerStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var stacks []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "archive.(*Importer)") || strings.Contains(g, "archive.readSources") {
			stacks = append(stacks, g)
		}
	}
	return stacks
}
