package app_test

import (
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
)

// TestExportConcurrentDownloads: 30 downloads of one completed export at the same moment
// all succeed, and each is recorded once, in the download log and in the ledger.
func TestExportConcurrentDownloads(t *testing.T) {
	t.Parallel()
	const downloads = 30
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d, app.ExportsConfig{})
		v := f.createExport("acme", request("RACE", f.archiveMail("acme", generated(3))))
		f.start()
		f.awaitExport("acme", v.JobID, export.StatusCompleted)

		start := make(chan struct{})
		errs := make([]error, downloads)
		var wg sync.WaitGroup
		for i := range downloads {
			wg.Go(func() {
				<-start
				md := domain.Metadata{Actor: fmt.Sprintf("auditor-%d", i), ClientIP: "192.0.2.1", UserAgent: "race"}
				errs[i] = f.x.Download(f.ctx, "acme", v.JobID, md, io.Discard)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			assert.NoError(t, err, "download %d", i)
		}
		assert.Equal(t, downloads, f.downloads(v.JobID), "every download is in the download log")
		recs, err := f.store.Load(f.ctx, export.StreamID(v.JobID))
		require.NoError(t, err)
		by := map[string]bool{}
		for _, rec := range recs {
			if rec.EventType == export.EventDownloaded {
				ev, err := export.Decode(rec.EventType, rec.Data)
				require.NoError(t, err)
				by[ev.(*export.Downloaded).DownloadedBy] = true
			}
		}
		assert.Len(t, by, downloads, "every download is in the ledger, once")
	})
}
