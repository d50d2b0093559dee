package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/s3store"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

// storeConfig is s3store's configuration for srv with t upload workers staging under dir.
func storeConfig(srv *s3server, dir string, t int) s3store.Config {
	return s3store.Config{Hostname: srv.endpoint, AccessKey: s3store.Secret(srv.accessKey), SecretKey: s3store.Secret(srv.secretKey),
		BucketPrefix: srv.prefix, Dir: dir, Threads: t}
}

// storeDrain stages every object (untimed), then times a store's start until it has
// uploaded them all: the upload workers alone.
func storeDrain(ctx context.Context, srv *s3server, dir string, objs [][]byte, t int) (time.Duration, benchenv.CPUTime, error) {
	tenant := filepath.Base(dir)
	staging, err := archive.NewLocalStore(dir)
	if err != nil {
		return 0, benchenv.CPUTime{}, err
	}
	for i, o := range objs {
		if err := staging.Put(ctx, archive.MessageKey(tenant, int64(i+1)), o); err != nil {
			return 0, benchenv.CPUTime{}, err
		}
	}
	start, cpu := time.Now(), benchenv.ProcessCPU()
	store, err := s3store.New(storeConfig(srv, dir, t), nil)
	if err != nil {
		return 0, benchenv.CPUTime{}, err
	}
	defer store.Close()
	err = store.WaitUploaded(ctx)
	took, used := time.Since(start), benchenv.ProcessCPU().Sub(cpu)
	if err != nil {
		return took, used, err
	}
	return took, used, checkUploaded(ctx, store, dir, tenant, len(objs))
}

// storeFull times t goroutines putting every object into a started store, then the wait
// until it has uploaded them all.
func storeFull(ctx context.Context, srv *s3server, dir string, objs [][]byte, t int) (time.Duration, benchenv.CPUTime, error) {
	tenant := filepath.Base(dir)
	store, err := s3store.New(storeConfig(srv, dir, t), nil)
	if err != nil {
		return 0, benchenv.CPUTime{}, err
	}
	defer store.Close()
	start, cpu := time.Now(), benchenv.ProcessCPU()
	err = forEach(ctx, len(objs), t, func(i int) error {
		return store.Put(ctx, archive.MessageKey(tenant, int64(i+1)), objs[i])
	})
	if err == nil {
		err = store.WaitUploaded(ctx)
	}
	took, used := time.Since(start), benchenv.ProcessCPU().Sub(cpu)
	if err != nil {
		return took, used, err
	}
	return took, used, checkUploaded(ctx, store, dir, tenant, len(objs))
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
