package archive_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/internal/testenv"
)

// BenchmarkCommitBatch commits batches of 1, 8 and 64 fresh generated messages on each
// database and reports the time per message: what a commit costs whatever it holds
// against what each message in it adds. The SMTP receiver's group commit holds at most as
// many messages as there are clients waiting for their 250; the import's batches are far
// larger (docs/performance.md, "SMTP ingest").
func BenchmarkCommitBatch(b *testing.B) {
	pool := []string{"ann@alpha.test", "bob@beta.test", "cy@gamma.test", "dee@delta.test", "eve@alpha.test"}
	for _, d := range dbtest.Dialects {
		for _, n := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/batch=%d", d, n), func(b *testing.B) {
				env := testenv.New(b, d)
				rng := rand.New(rand.NewSource(int64(n)))
				start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				sent := 0
				for b.Loop() {
					b.StopTimer()
					batch := make([]*archive.Prepared, 0, n)
					for _, m := range archivetest.GenerateMail(rng, n, pool, start.Add(time.Duration(sent)*time.Minute)) {
						p, err := env.Archive.Prepare(archive.Incoming{Tenant: "default", Raw: m.Raw, Source: "bench"})
						if err != nil {
							b.Fatal(err)
						}
						batch = append(batch, p)
					}
					sent += n
					b.StartTimer()
					if _, err := env.Archive.Commit(b.Context(), batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/message")
			})
		}
	}
}
