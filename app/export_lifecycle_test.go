package app_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
)

// jobDir is a job's directory under DIR_EXPORT.
func (f *exportFixture) jobDir(v *app.ExportView) string {
	return filepath.Join(f.cfg.Dir, v.TenantID, "ediscovery", v.JobID)
}

// awaitProgress waits until a running job has recorded processed items.
func (f *exportFixture) awaitProgress(v *app.ExportView) {
	f.t.Helper()
	require.Eventually(f.t, func() bool {
		got, err := f.x.Get(f.ctx, v.TenantID, v.JobID)
		require.NoError(f.t, err)
		return got.Status == export.StatusRunning && got.Processed > 0
	}, 20*time.Second, time.Millisecond, "export %s never made progress", v.JobID)
}

// TestExportCancelAndDelete: a running job cannot be deleted; cancelled, its workers stop
// within a second, its partial output is removed and its numbers stay consumed. A pending
// job is cancelled at once; a finished one is not. A deleted job's files are removed, it
// is gone from the API, and its download log stays.
func TestExportCancelAndDelete(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d, app.ExportsConfig{ProgressItems: 5, ProgressInterval: 20 * time.Millisecond})
		mail := f.archiveMail("acme", generated(200))
		f.slow.pause.Store(int64(3 * time.Millisecond))
		long := request("CXL", mail)
		long.Workers = intPtr(1)
		running := f.createExport("acme", long)
		f.start()
		f.awaitProgress(running)
		require.DirExists(t, f.jobDir(running), "partial output")

		err := f.x.Delete(f.ctx, "acme", running.JobID, actor("auditor"))
		assert.ErrorIs(t, err, domain.ErrInvalidTransition, "delete while running")
		v, err := f.x.Cancel(f.ctx, "acme", running.JobID, actor("auditor"))
		require.NoError(t, err)
		assert.Equal(t, export.StatusCancelled, v.Status)
		cancelledAt := time.Now()
		require.Eventually(t, func() bool { return !exists(f.jobDir(running)) }, time.Second, time.Millisecond, "partial output removed")
		reads := f.slow.reads.Load()
		time.Sleep(200 * time.Millisecond) // deliberate: no email may be read in this window
		assert.Equal(t, reads, f.slow.reads.Load(), "no email read after the workers stopped")
		assert.Less(t, time.Since(cancelledAt), 2*time.Second)
		assert.Less(t, reads, int64(len(mail)), "the cancel came mid-run")
		_, err = f.x.Cancel(f.ctx, "acme", running.JobID, actor("auditor"))
		assert.ErrorIs(t, err, domain.ErrInvalidTransition, "cancel of a cancelled job")
		assert.Equal(t, export.StatusCancelled, f.awaitExport("acme", running.JobID, export.StatusCancelled).Status, "the run records nothing after the cancel")

		f.slow.pause.Store(0)
		done := f.createExport("acme", request("CXL", mail[:20]))
		assert.Equal(t, running.BatesStart+int64(len(mail)), done.BatesStart, "the cancelled job's numbers stay consumed")
		f.awaitExport("acme", done.JobID, export.StatusCompleted)
		_, err = f.x.Cancel(f.ctx, "acme", done.JobID, actor("auditor"))
		assert.ErrorIs(t, err, domain.ErrInvalidTransition, "cancel of a completed job")
		f.download("acme", done.JobID)
		require.DirExists(t, f.jobDir(done))
		require.NoError(t, f.x.Delete(f.ctx, "acme", done.JobID, actor("auditor")))
		assert.NoDirExists(t, f.jobDir(done), "files removed")
		_, err = f.x.Get(f.ctx, "acme", done.JobID)
		assert.ErrorIs(t, err, app.ErrNotFound, "a deleted job is gone")
		assert.ErrorIs(t, f.x.Delete(f.ctx, "acme", done.JobID, actor("auditor")), app.ErrNotFound)
		assert.Equal(t, 1, f.downloads(done.JobID), "the download log stays")
		require.NoError(t, f.x.Delete(f.ctx, "acme", running.JobID, actor("auditor")), "delete of a cancelled job")
	})
}

// TestExportCancelPending: with the service not running jobs, a job stays pending and
// is cancelled at once; it never starts afterwards.
func TestExportCancelPending(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t, database.SQLite, app.ExportsConfig{})
	mail := f.archiveMail("acme", generated(3))
	v := f.createExport("acme", request("PEND", mail))
	got, err := f.x.Cancel(f.ctx, "acme", v.JobID, actor("auditor"))
	require.NoError(t, err)
	assert.Equal(t, export.StatusCancelled, got.Status)
	require.NotNil(t, got.CompletedAt)
	other := f.createExport("acme", request("PEND", mail))
	f.start()
	f.awaitExport("acme", other.JobID, export.StatusCompleted)
	got, err = f.x.Get(f.ctx, "acme", v.JobID)
	require.NoError(t, err)
	assert.Equal(t, export.StatusCancelled, got.Status)
	assert.Nil(t, got.StartedAt, "a cancelled pending job never starts")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func (f *exportFixture) downloads(jobID string) int {
	f.t.Helper()
	var n int
	require.NoError(f.t, f.db.QueryRow(f.db.Rebind(`SELECT COUNT(*) FROM ediscovery_download_log WHERE job_id = ?`), jobID).Scan(&n))
	return n
}

// TestExportDownloadAndTenants: a download is refused until the job is completed; each
// one is logged with user, time, IP and user agent, in the table and the ledger. Another
// tenant's job is not found by any call; administrators see every tenant's.
func TestExportDownloadAndTenants(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d, app.ExportsConfig{})
		v := f.createExport("acme", request("DL", f.archiveMail("acme", generated(5))))
		g := f.createExport("globex", request("GX", f.archiveMail("globex", generated(2))))
		var buf bytes.Buffer
		err := f.x.Download(f.ctx, "acme", v.JobID, actor("auditor"), &buf)
		assert.ErrorIs(t, err, export.ErrNotReady, "download of a pending job")
		assert.Zero(t, buf.Len(), "nothing written")

		for _, call := range tenantCalls(f, v.JobID) {
			assert.ErrorIs(t, call.run("globex"), app.ErrNotFound, "%s of another tenant's job", call.name)
		}
		f.start()
		f.awaitExport("acme", v.JobID, export.StatusCompleted)
		f.awaitExport("globex", g.JobID, export.StatusCompleted)
		before := time.Now().Add(-time.Second)
		md := domain.Metadata{Actor: "dana", ClientIP: "2001:db8::7", UserAgent: "curl/8.5"}
		d1, err := f.x.OpenDownload(f.ctx, "acme", v.JobID, md)
		require.NoError(t, err)
		assert.Equal(t, "ediscovery-DL-"+v.JobID+".zip", d1.FileName)
		assert.Equal(t, `attachment; filename=ediscovery-DL-`+v.JobID+`.zip`, d1.ContentDisposition())
		n, err := d1.Stream(f.ctx, &buf)
		require.NoError(t, err)
		assert.Equal(t, int64(buf.Len()), n)
		assert.Equal(t, 5+1, len(unzip(t, buf.Bytes())), "natives and the CSV (the defaults)")
		f.checkDownloadLog(v.JobID, md, before)

		mine, err := f.x.List(f.ctx, "acme")
		require.NoError(t, err)
		require.Len(t, mine.Exports, 1)
		assert.Equal(t, v.JobID, mine.Exports[0].JobID)
		all, err := f.x.List(f.ctx, app.AllTenants)
		require.NoError(t, err)
		assert.Len(t, all.Exports, 2, "administrators list every tenant's jobs")
		_, err = f.x.Get(f.ctx, app.AllTenants, g.JobID)
		assert.NoError(t, err)
		for _, call := range tenantCalls(f, v.JobID) {
			assert.ErrorIs(t, call.run("globex"), app.ErrNotFound, "%s of another tenant's completed job", call.name)
		}
		assert.Equal(t, 1, f.downloads(v.JobID), "refused calls log nothing")
	})
}

type tenantCall struct {
	name string
	run  func(tenant string) error
}

func tenantCalls(f *exportFixture, jobID string) []tenantCall {
	md := actor("intruder")
	return []tenantCall{
		{"get", func(tn string) error { _, err := f.x.Get(f.ctx, tn, jobID); return err }},
		{"cancel", func(tn string) error { _, err := f.x.Cancel(f.ctx, tn, jobID, md); return err }},
		{"delete", func(tn string) error { return f.x.Delete(f.ctx, tn, jobID, md) }},
		{"download", func(tn string) error { _, err := f.x.OpenDownload(f.ctx, tn, jobID, md); return err }},
	}
}

func (f *exportFixture) checkDownloadLog(jobID string, md domain.Metadata, before time.Time) {
	t := f.t
	var by, ip, ua string
	var at any
	require.NoError(t, f.db.QueryRow(f.db.Rebind(`SELECT downloaded_by, downloaded_at, ip_address, user_agent FROM ediscovery_download_log WHERE job_id = ?`), jobID).
		Scan(&by, &at, &ip, &ua))
	assert.Equal(t, []string{md.Actor, md.ClientIP, md.UserAgent}, []string{by, ip, ua})
	when, err := database.TimeValue(at)
	require.NoError(t, err)
	assert.WithinRange(t, when, before, time.Now().Add(time.Second))
	recs, err := f.store.Load(f.ctx, export.StreamID(jobID))
	require.NoError(t, err)
	last := recs[len(recs)-1]
	assert.Equal(t, export.EventDownloaded, last.EventType, "the download is in the ledger")
	assert.Contains(t, string(last.Metadata), md.ClientIP)
}
