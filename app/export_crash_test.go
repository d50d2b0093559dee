package app_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/migrations"
)

// The variables that turn the test binary into the export runner child.
const (
	exportChildEnv   = "MAILLEDGER_EXPORT_CRASH_CHILD"
	exportChildDB    = "MAILLEDGER_EXPORT_CRASH_DB"
	exportChildDir   = "MAILLEDGER_EXPORT_CRASH_DIR"
	exportCrashPause = 3 * time.Millisecond
)

// crashConfig makes the child record progress often.
var crashConfig = app.ExportsConfig{ProgressItems: 5, ProgressInterval: 10 * time.Millisecond}

// TestExportCrash kills the process running an export with SIGKILL in the middle of the
// run. After a restart the job is failed with the interrupted message, its slot is free
// and its partial output gone; a new job on the prefix numbers after the interrupted
// job's whole range, so no Bates number is issued twice, and the ledger verifies.
func TestExportCrash(t *testing.T) {
	if os.Getenv(exportChildEnv) == "1" {
		runExportChild(t)
		return
	}
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		url, dir := dbtest.URL(t, d), t.TempDir()
		f := openExportFixture(t, openURL(t, url), dir, crashConfig)
		mail := f.archiveMail("acme", generated(300))
		req := request("CRASH", mail)
		req.Workers, req.IncludeText = intPtr(1), boolPtr(true)
		job := f.createExport("acme", req)
		f.killChildMidRun(url, dir, job)
		v, err := f.x.Get(f.ctx, "acme", job.JobID)
		require.NoError(t, err)
		require.Equal(t, export.StatusRunning, v.Status, "the killed run left the job running")
		require.DirExists(t, f.jobDir(job), "partial output")
		numbered := caseOf(f, job).items()

		f.start()
		v = f.awaitExport("acme", job.JobID, export.StatusFailed)
		require.NotNil(t, v.ErrorMessage)
		assert.Equal(t, app.InterruptedMessage, *v.ErrorMessage)
		assert.NoDirExists(t, f.jobDir(job), "partial output removed")
		assert.Equal(t, numbered, caseOf(f, job).items(), "the interrupted job is never renumbered")
		next := f.createExport("acme", request("CRASH", mail[:10]))
		assert.Equal(t, job.BatesStart+int64(len(mail)), next.BatesStart, "the interrupted job's range stays consumed")
		f.awaitExport("acme", next.JobID, export.StatusCompleted)
		var active int
		require.NoError(t, f.db.QueryRow(`SELECT COUNT(*) FROM ediscovery_active_exports`).Scan(&active))
		assert.Zero(t, active, "no slot stays taken")
		key, err := eventstore.LoadOrCreateKey(t.TempDir(), "crash")
		require.NoError(t, err)
		_, err = f.store.Verify(f.ctx, key.PublicKey, nil)
		assert.NoError(t, err, "the ledger verifies after the crash")
	})
}

// caseOf gives access to a job's items.
func caseOf(f *exportFixture, v *app.ExportView) *productionCase {
	return &productionCase{f: f, view: v}
}

func openURL(t *testing.T, url string) *database.DB {
	t.Helper()
	db, err := database.Open(url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.NoError(t, migrations.Up(t.Context(), db))
	return db
}

// killChildMidRun starts the runner child and kills it with SIGKILL once the job has
// recorded some progress, failing when the job finished first.
func (f *exportFixture) killChildMidRun(url, dir string, job *app.ExportView) {
	f.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExportCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), exportChildEnv+"=1", exportChildDB+"="+url, exportChildDir+"="+dir)
	require.NoError(f.t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case err := <-exited:
			f.t.Fatalf("the child exited before the kill: %v", err)
		case <-deadline:
			_ = cmd.Process.Kill()
			f.t.Fatal("the child made no progress")
		case <-time.After(2 * time.Millisecond):
		}
		v, err := f.x.Get(f.ctx, "acme", job.JobID)
		require.NoError(f.t, err)
		require.NotEqual(f.t, export.StatusCompleted, v.Status, "the job finished before the kill")
		if v.Processed >= 10 {
			require.NoError(f.t, cmd.Process.Kill()) // SIGKILL
			<-exited
			f.t.Logf("killed with %d of %d emails processed", v.Processed, v.TotalEmails)
			return
		}
	}
}

// runExportChild runs the exports over the parent's database and files until killed.
func runExportChild(t *testing.T) {
	db, err := database.Open(os.Getenv(exportChildDB))
	require.NoError(t, err)
	f := openExportFixture(t, db, os.Getenv(exportChildDir), crashConfig)
	f.slow.pause.Store(int64(exportCrashPause))
	require.NoError(t, f.x.Run(context.Background()))
}
