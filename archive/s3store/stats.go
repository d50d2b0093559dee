package s3store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mailledger/mailledger/database"
)

// BucketStat is one row of bucket_stats: a bucket's size in bytes and its number of
// objects at time T.
type BucketStat struct {
	Bucket  string
	Size    int64
	Objects int64
	T       time.Time
}

// BucketStats measures every bucket of this store (those whose names start with the
// bucket prefix) by listing its objects; T is left zero.
func (s *Store) BucketStats(ctx context.Context) ([]BucketStat, error) {
	buckets, err := s.listBuckets(ctx)
	if err != nil {
		return nil, err
	}
	stats := make([]BucketStat, 0, len(buckets))
	for _, b := range buckets {
		st := BucketStat{Bucket: b}
		err := s.walkBucket(ctx, b, func(_ string, size int64) error {
			st.Size += size
			st.Objects++
			return nil
		})
		if err != nil {
			return nil, err
		}
		stats = append(stats, st)
	}
	return stats, nil
}

// RecordBucketStats inserts stats into bucket_stats in one transaction.
func RecordBucketStats(ctx context.Context, db *database.DB, stats []BucketStat) error {
	return db.InTx(ctx, func(tx *database.Tx) error {
		for _, st := range stats {
			_, err := tx.Exec(ctx, `INSERT INTO bucket_stats (bucket, size, objects, t) VALUES (?, ?, ?, ?)`,
				st.Bucket, st.Size, st.Objects, database.TimeArg(tx.Dialect, st.T))
			if err != nil {
				return fmt.Errorf("bucket_stats: %w", err)
			}
		}
		return nil
	})
}

// ReadBucketStats returns the newest row of each bucket, ordered by bucket: what the
// tenant listing shows.
func ReadBucketStats(ctx context.Context, db *database.DB) ([]BucketStat, error) {
	rows, err := db.QueryContext(ctx, `SELECT b.bucket, b.size, b.objects, b.t FROM bucket_stats b
		WHERE b.t = (SELECT MAX(n.t) FROM bucket_stats n WHERE n.bucket = b.bucket) ORDER BY b.bucket`)
	if err != nil {
		return nil, fmt.Errorf("bucket_stats: %w", err)
	}
	defer rows.Close()
	var stats []BucketStat
	for rows.Next() {
		var st BucketStat
		var t any
		if err := rows.Scan(&st.Bucket, &st.Size, &st.Objects, &t); err != nil {
			return nil, fmt.Errorf("bucket_stats: %w", err)
		}
		if st.T, err = database.TimeValue(t); err != nil {
			return nil, fmt.Errorf("bucket_stats: %w", err)
		}
		stats = append(stats, st)
	}
	return stats, rows.Err()
}

// DefaultStatsInterval is how often the statistics job runs: hourly.
const DefaultStatsInterval = time.Hour

// StatsJob fills bucket_stats from the store, at start and then every Interval.
type StatsJob struct {
	Store    *Store
	DB       *database.DB
	Interval time.Duration    // default DefaultStatsInterval
	Clock    func() time.Time // default time.Now
	Logger   *slog.Logger     // default none
}

// RunOnce measures every bucket and records the result with the time of the run.
func (j *StatsJob) RunOnce(ctx context.Context) error {
	if j.Store == nil || j.DB == nil {
		return errors.New("s3 statistics job: store and database are required")
	}
	stats, err := j.Store.BucketStats(ctx)
	if err != nil {
		return err
	}
	now := time.Now
	if j.Clock != nil {
		now = j.Clock
	}
	t := now().UTC()
	for i := range stats {
		stats[i].T = t
	}
	return RecordBucketStats(ctx, j.DB, stats)
}

// Run runs the job at once and then every Interval until ctx is done; a failed run is
// logged and the next one comes on time. It returns nil once ctx is done.
func (j *StatsJob) Run(ctx context.Context) error {
	every := j.Interval
	if every <= 0 {
		every = DefaultStatsInterval
	}
	log := j.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if err := j.RunOnce(ctx); err != nil && ctx.Err() == nil {
			log.Warn("s3 bucket statistics failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
