package s3store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/blobstoretest"
	"github.com/mailledger/mailledger/archive/s3store"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestStatsJobFillsBucketStats: after Puts are uploaded, a run of the statistics job
// records each bucket's size and object count; a later run adds rows and
// ReadBucketStats answers the newest, on every database.
func TestStatsJobFillsBucketStats(t *testing.T) {
	cfg := testConfig(t)
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		c := cfg
		c.BucketPrefix = "st" + blobstoretest.Tenant(t) + "."
		s := open(t, c)
		db := dbtest.Open(t, d)
		for i, size := range []int{10, 20, 30} {
			require.NoError(t, s.Put(ctx, archive.MessageKey("acme", int64(i)), make([]byte, size)))
		}
		require.NoError(t, s.Put(ctx, archive.MessageKey("globex", 1), make([]byte, 7)))
		waitUploaded(t, s)
		first := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
		job := &s3store.StatsJob{Store: s, DB: db, Clock: func() time.Time { return first }}
		require.NoError(t, job.RunOnce(ctx))
		require.NoError(t, s.Delete(ctx, archive.MessageKey("acme", 0)))
		job.Clock = func() time.Time { return first.Add(time.Hour) }
		require.NoError(t, job.RunOnce(ctx))

		got, err := s3store.ReadBucketStats(ctx, db)
		require.NoError(t, err)
		assert.Equal(t, []s3store.BucketStat{
			{Bucket: c.BucketPrefix + "acme", Size: 50, Objects: 2, T: first.Add(time.Hour)},
			{Bucket: c.BucketPrefix + "globex", Size: 7, Objects: 1, T: first.Add(time.Hour)},
		}, got)
		var rows int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM bucket_stats`).Scan(&rows))
		assert.Equal(t, 4, rows, "one row per bucket and run")
	})
}
