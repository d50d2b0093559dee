package app_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/export"
)

// attachmentMail is a message of about size bytes: a short text part and one attachment
// of random bytes, base64-encoded.
func attachmentMail(i, size int) archivetest.Mail {
	data := make([]byte, size*3/4)
	_, _ = rand.Read(data)
	enc := base64.StdEncoding.EncodeToString(data)
	var body strings.Builder
	for len(enc) > 76 {
		body.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	body.WriteString(enc + "\r\n")
	from := fmt.Sprintf("sender%d@x.test", i)
	raw := "From: " + from + "\r\nTo: b@y.test\r\nSubject: attachment " + fmt.Sprint(i) +
		"\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"B\"\r\n\r\n" +
		"--B\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n" +
		"--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"data.bin\"\r\n" +
		"Content-Transfer-Encoding: base64\r\n\r\n" + body.String() + "--B--\r\n"
	return archivetest.Mail{Raw: []byte(raw), From: from, Recipients: []string{"b@y.test"}, Attachments: 1}
}

// samplePeak calls probe every interval until the returned function is called, which
// returns the largest value probe gave.
func samplePeak(interval time.Duration, probe func() int64) func() int64 {
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if n := probe(); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(interval):
			}
		}
	})
	return func() int64 {
		close(stop)
		wg.Wait()
		return peak.Load()
	}
}

// TestExportMemoryBudget: with a budget of about three emails, jobs of 8 workers never hold
// more than the budget of originals in memory (sampled while they run), an email larger
// than the whole budget is produced alone, three jobs of three tenants share the budget
// and all complete, and every byte is given back when they end.
func TestExportMemoryBudget(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		const size = 40 << 10
		budget := int64(3*size + size/2)
		f := newExportFixture(t, d, app.ExportsConfig{Workers: 8, MaxInFlightBytes: budget})
		f.slow.pause.Store(int64(2 * time.Millisecond)) // reads overlap
		jobs := map[string]string{}
		ids := map[string][]int64{}
		for k, tenant := range []string{"acme", "globex", "initech"} {
			var mails []archivetest.Mail
			for i := range 12 {
				mails = append(mails, attachmentMail(100*k+i, size))
			}
			mails = append(mails, attachmentMail(100*k+50, int(budget)*2)) // larger than the budget
			ids[tenant] = f.archiveMail(tenant, mails)
		}
		peak := samplePeak(100*time.Microsecond, f.x.InFlightBytes)
		for _, tenant := range []string{"acme", "globex", "initech"} {
			req := request(strings.ToUpper(tenant[:3])+"MEM", ids[tenant])
			req.Workers = intPtr(8)
			jobs[tenant] = f.createExport(tenant, req).JobID
		}
		f.start()
		for tenant, jobID := range jobs {
			v := f.awaitExport(tenant, jobID, export.StatusCompleted, export.StatusFailed)
			require.Equal(t, export.StatusCompleted, v.Status, "%v", v.ErrorMessage)
			assert.Equal(t, len(ids[tenant]), v.Processed)
			assert.Equal(t, 0, v.Failed)
		}
		seen := peak()
		assert.LessOrEqual(t, seen, budget, "bytes of originals in memory")
		assert.Greater(t, seen, int64(size), "the sampler saw emails in flight")
		assert.Equal(t, int64(0), f.x.InFlightBytes(), "every byte given back")
	})
}

// TestExportCancelGivesMemoryBack: a job cancelled while its emails are in flight gives
// their bytes back, and the next job runs with the whole budget.
func TestExportCancelGivesMemoryBack(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		const size = 20 << 10
		f := newExportFixture(t, d, app.ExportsConfig{Workers: 4, MaxInFlightBytes: 4 * size,
			ProgressItems: 5, ProgressInterval: 20 * time.Millisecond})
		var mails []archivetest.Mail
		for i := range 60 {
			mails = append(mails, attachmentMail(i, size))
		}
		mail := f.archiveMail("acme", mails)
		f.slow.pause.Store(int64(5 * time.Millisecond))
		req := request("GIVE", mail)
		req.Workers = intPtr(4)
		running := f.createExport("acme", req)
		f.start()
		f.awaitProgress(running)
		require.Eventually(t, func() bool { return f.x.InFlightBytes() > 0 }, 5*time.Second, 100*time.Microsecond)
		_, err := f.x.Cancel(f.ctx, "acme", running.JobID, actor("auditor"))
		require.NoError(t, err)
		require.Eventually(t, func() bool { return f.x.InFlightBytes() == 0 }, 2*time.Second, time.Millisecond,
			"the cancelled job's bytes given back")

		f.slow.pause.Store(0)
		next := request("NEXT", mail[:10])
		next.Workers = intPtr(4)
		v := f.createExport("acme", next)
		v = f.awaitExport("acme", v.JobID, export.StatusCompleted, export.StatusFailed)
		assert.Equal(t, export.StatusCompleted, v.Status, "%v", v.ErrorMessage)
		assert.Equal(t, int64(0), f.x.InFlightBytes())
	})
}

// TestExportPeakMemoryWithLargeEmails exports 24 emails of 12 MB on 32 workers with the
// default budget: the heap stays under 512 MiB (without the budget, the window of 66
// emails took 3.6 GiB with 20 MB emails).
func TestExportPeakMemoryWithLargeEmails(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: 290 MB of mail; not with -short")
	}
	f := newExportFixture(t, database.SQLite, app.ExportsConfig{Workers: 32})
	var ids []int64
	for i := range 24 {
		ids = append(ids, f.archiveMail("acme", []archivetest.Mail{attachmentMail(i, 12<<20)})...)
	}
	runtime.GC()
	heapPeak := samplePeak(5*time.Millisecond, func() int64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapInuse)
	})
	f.start()
	req := request("BIG", ids)
	req.Workers = intPtr(32)
	v := f.createExport("acme", req)
	v = f.awaitExport("acme", v.JobID, export.StatusCompleted, export.StatusFailed)
	peak := heapPeak()
	require.Equal(t, export.StatusCompleted, v.Status, "%v", v.ErrorMessage)
	assert.Equal(t, len(ids), v.Processed)
	t.Logf("peak HeapInuse %d MiB", peak>>20)
	assert.Less(t, peak, int64(512<<20), "peak heap")
}
