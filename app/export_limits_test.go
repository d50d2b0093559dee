package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/export"
)

// TestExportLimits runs 10 jobs of 3 tenants under the default limits (3 in all, 1 per
// tenant). ediscovery_active_exports, sampled while they run, never exceeds the limits;
// replaying the ledger's start and end events shows the same for every instant; all
// jobs complete; each tenant's jobs start in the order they were created.
func TestExportLimits(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d, app.ExportsConfig{Workers: 2})
		tenants := []string{"acme", "globex", "initech", "acme", "globex", "initech", "acme", "globex", "initech", "acme"}
		mail := map[string][]int64{}
		for _, tenant := range []string{"acme", "globex", "initech"} {
			mail[tenant] = f.archiveMail(tenant, generated(40))
		}
		var jobs []*app.ExportView
		for _, tenant := range tenants {
			jobs = append(jobs, f.createExport(tenant, request("LIMIT", mail[tenant])))
		}
		samples := sampleActive(t, f)
		f.start()
		for i, j := range jobs {
			v := f.awaitExport(tenants[i], j.JobID, export.StatusCompleted, export.StatusFailed)
			assert.Equal(t, export.StatusCompleted, v.Status, "job %d: %v", i, v.ErrorMessage)
		}
		maxGlobal, maxTenant := samples()
		assert.LessOrEqual(t, maxGlobal, 3, "sampled running jobs in all")
		assert.LessOrEqual(t, maxTenant, 1, "sampled running jobs of one tenant")
		checkLedgerLimits(t, f, tenants, jobs)
	})
}

// sampleActive counts ediscovery_active_exports every millisecond until the returned
// function is called, which gives the highest counts seen in all and per tenant.
func sampleActive(t *testing.T, f *exportFixture) func() (int, int) {
	ctx, cancel := context.WithCancel(f.ctx)
	var wg sync.WaitGroup
	maxGlobal, maxTenant := 0, 0
	wg.Go(func() {
		for ctx.Err() == nil {
			rows, err := f.db.QueryContext(ctx, `SELECT tenant_id, COUNT(*) FROM ediscovery_active_exports GROUP BY tenant_id`)
			if err != nil {
				continue
			}
			total := 0
			for rows.Next() {
				var tenant string
				var n int
				require.NoError(t, rows.Scan(&tenant, &n))
				total += n
				maxTenant = max(maxTenant, n)
			}
			rows.Close()
			maxGlobal = max(maxGlobal, total)
			time.Sleep(time.Millisecond) // deliberate: the sampler's interval
		}
	})
	return func() (int, int) {
		cancel()
		wg.Wait()
		return maxGlobal, maxTenant
	}
}

// checkLedgerLimits replays every job's start and end positions: at no position do more
// than 3 jobs run, or more than 1 of a tenant; the first three start together; a tenant's
// jobs start in creation order.
func checkLedgerLimits(t *testing.T, f *exportFixture, tenants []string, jobs []*app.ExportView) {
	type span struct {
		tenant     string
		start, end int64
	}
	var spans []span
	for i, j := range jobs {
		recs, err := f.store.Load(f.ctx, export.StreamID(j.JobID))
		require.NoError(t, err)
		s := span{tenant: tenants[i]}
		for _, r := range recs {
			switch r.EventType {
			case export.EventStarted:
				s.start = r.Position
			case export.EventCompleted, export.EventFailed:
				s.end = r.Position
			}
		}
		require.Positive(t, s.start)
		require.Greater(t, s.end, s.start)
		spans = append(spans, s)
	}
	peak := 0
	for _, at := range spans {
		running, perTenant := 0, map[string]int{}
		for _, s := range spans {
			if s.start <= at.start && at.start < s.end {
				running++
				perTenant[s.tenant]++
			}
		}
		peak = max(peak, running)
		assert.LessOrEqual(t, running, 3, "running jobs at position %d", at.start)
		for tenant, n := range perTenant {
			assert.LessOrEqual(t, n, 1, "running jobs of %s at position %d", tenant, at.start)
		}
	}
	assert.Equal(t, 3, peak, "one job per tenant runs at once at the start")
	last := map[string]int64{}
	for _, s := range spans {
		assert.Greater(t, s.start, last[s.tenant], "jobs of %s start first in, first out", s.tenant)
		last[s.tenant] = s.start
	}
}
