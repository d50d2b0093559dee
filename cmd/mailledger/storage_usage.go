package main

import (
	"context"
	"os"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/s3store"
	"github.com/mailledger/mailledger/database"
)

// storageUsage is the message store as the management API's customer list reports it:
// the S3 store's bucket statistics, or the local store's folder.
func (o *opened) storageUsage() app.StorageUsage {
	if o.s3 != nil {
		return s3Usage{db: o.db, store: o.s3, prefix: o.s3cfg.BucketPrefix}
	}
	return localUsage{dir: o.cfg.StoreDir()}
}

// localUsage: no figure of its own (the messages' sizes are shown); the store answers when
// its folder is there.
type localUsage struct{ dir string }

func (localUsage) Used(context.Context, string) (int64, bool, error) { return 0, false, nil }

func (l localUsage) Check(context.Context) error {
	_, err := os.Stat(l.dir)
	return err
}

// s3Usage reads the newest bucket_stats row of the tenant's bucket (the hourly statistics
// job's), and checks the store with a list of its buckets.
type s3Usage struct {
	db     *database.DB
	store  *s3store.Store
	prefix string
}

func (u s3Usage) Used(ctx context.Context, tenant string) (int64, bool, error) {
	bucket, err := s3store.BucketName(u.prefix, tenant)
	if err != nil {
		return 0, false, nil // a tenant no bucket can hold has nothing in S3
	}
	stats, err := s3store.ReadBucketStats(ctx, u.db)
	if err != nil {
		return 0, false, err
	}
	for _, st := range stats {
		if st.Bucket == bucket {
			return st.Size, true, nil
		}
	}
	return 0, false, nil
}

func (u s3Usage) Check(ctx context.Context) error { return u.store.Ping(ctx) }
