package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/s3store"
)

// storeConfig is s3store's configuration for srv with t upload workers staging under dir.
func storeConfig(srv *s3server, dir string, t int) s3store.Config {
	return s3store.Config{Hostname: srv.endpoint, AccessKey: s3store.Secret(srv.accessKey), SecretKey: s3store.Secret(srv.secretKey),
		BucketPrefix: srv.prefix, Dir: dir, Threads: t}
}

// storeDrain stages every object (untimed), then times a store's start until it has
// uploaded them all: the upload workers alone.
func storeDrain(ctx context.Context, srv *s3server, dir string, objs [][]byte, t int) (leg, error) {
	tenant := filepath.Base(dir)
	staging, err := archive.NewLocalStore(dir)
	if err != nil {
		return leg{}, err
	}
	for i, o := range objs {
		if err := staging.Put(ctx, archive.MessageKey(tenant, int64(i+1)), o); err != nil {
			return leg{}, err
		}
	}
	var store *s3store.Store
	l, err := measure(srv, func() error {
		var err error
		if store, err = s3store.New(storeConfig(srv, dir, t), nil); err != nil {
			return err
		}
		return store.WaitUploaded(ctx)
	})
	if store != nil {
		defer store.Close()
	}
	if err != nil {
		return l, err
	}
	return l, checkUploaded(ctx, store, dir, tenant, len(objs))
}

// storeFull times t goroutines putting every object into a started store, then the wait
// until it has uploaded them all.
func storeFull(ctx context.Context, srv *s3server, dir string, objs [][]byte, t int) (leg, error) {
	return storeTimed(ctx, srv, dir, objs, t, func(store *s3store.Store, tenant string) error {
		return forEach(ctx, len(objs), t, func(i int) error {
			return store.Put(ctx, archive.MessageKey(tenant, int64(i+1)), objs[i])
		})
	})
}

// commitBatch is the files of one batched leg's commit: the importer's default batch.
const commitBatch = 200

// storeBatched times a started store taking every object as the archive's commits give
// them (archive.BatchStore: commitBatch files staged together, one commit after the
// other, each durable before the next), then the wait until it has uploaded them all.
func storeBatched(ctx context.Context, srv *s3server, dir string, objs [][]byte, t int) (leg, error) {
	return storeTimed(ctx, srv, dir, objs, t, func(store *s3store.Store, tenant string) error {
		for start := 0; start < len(objs); start += commitBatch {
			b := store.NewBatch(ctx)
			for i := start; i < min(start+commitBatch, len(objs)); i++ {
				b.Add(archive.MessageKey(tenant, int64(i+1)), objs[i])
			}
			if err := b.Wait(); err != nil {
				return err
			}
		}
		return nil
	})
}

// storeTimed starts a store with t upload workers staging under dir and times stage (which
// hands it every object, as tenant's) and the wait until it has uploaded them all; then it
// checks that they all are in the bucket.
func storeTimed(ctx context.Context, srv *s3server, dir string, objs [][]byte, t int, stage func(*s3store.Store, string) error) (leg, error) {
	tenant := filepath.Base(dir)
	store, err := s3store.New(storeConfig(srv, dir, t), nil)
	if err != nil {
		return leg{}, err
	}
	defer store.Close()
	l, err := measure(srv, func() error {
		if err := stage(store, tenant); err != nil {
			return err
		}
		return store.WaitUploaded(ctx)
	})
	if err != nil {
		return l, err
	}
	return l, checkUploaded(ctx, store, dir, tenant, len(objs))
}

// checkUploaded checks that the store lists n keys of tenant and that its staging
// directory is empty: every file uploaded and confirmed.
func checkUploaded(ctx context.Context, store *s3store.Store, dir, tenant string, n int) error {
	staging, err := archive.NewLocalStore(dir)
	if err != nil {
		return err
	}
	staged := 0
	if err := staging.List(ctx, tenant+"/", func(string) error { staged++; return nil }); err != nil {
		return err
	}
	if staged != 0 {
		return fmt.Errorf("%d files of %s still staged after WaitUploaded", staged, tenant)
	}
	listed := 0
	if err := store.List(ctx, tenant+"/", func(string) error { listed++; return nil }); err != nil {
		return err
	}
	if listed != n {
		return fmt.Errorf("store lists %d files of %s; want %d", listed, tenant, n)
	}
	return nil
}
