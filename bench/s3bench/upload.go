package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"golang.org/x/sync/errgroup"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/s3store"
	"github.com/mailledger/mailledger/bench/internal/benchcorpus"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

// leg is one timed upload of all objects: its time, this process's CPU and the S3
// server's (when the run started it).
type leg struct {
	took      time.Duration
	cpu, srv  benchenv.CPUTime
	hasServer bool
}

// measure times fn, with the CPU it took here and in the server.
func measure(srv *s3server, fn func() error) (leg, error) {
	start, cpu, scpu := time.Now(), benchenv.ProcessCPU(), srv.cpu()
	err := fn()
	return leg{took: time.Since(start), cpu: benchenv.ProcessCPU().Sub(cpu), srv: srv.cpu().Sub(scpu), hasServer: srv.pid > 0}, err
}

// uploadResult is one s3_threads value: the plain loop, the plain loop with s3store's
// checks, the store's upload of files already staged (drain), Put + upload (store), and
// the archive's commits' batches + upload (batched).
type uploadResult struct {
	threads                                     int
	plain, sums, checked, drain, store, batched leg
}

// runUploads seals M corpus copies and uploads them for each s3_threads value.
func runUploads(ctx context.Context, cfg *config, srv *s3server, work string, out io.Writer) error {
	objs, err := sealedObjects(cfg, work, cfg.objects)
	if err != nil {
		return err
	}
	size := benchcorpus.Size(objs)
	fmt.Fprintf(out, "upload: %d sealed message files (corpus copies sealed with archive.Keyring), %.1f MB\n", len(objs), float64(size)/1e6)
	fmt.Fprintf(out, "  plain:   aws-sdk-go-v2 PutObject of each object, N goroutines, bucket made before timing (the baseline)\n")
	fmt.Fprintf(out, "  sums:    the same with s3store's Content-MD5 and x-amz-checksum-sha256 headers\n")
	fmt.Fprintf(out, "  checked: the same with the headers, then HeadObject: all s3store sends for an object\n")
	fmt.Fprintf(out, "  drain:   files staged before timing; s3store.New with s3_threads N, until WaitUploaded\n")
	fmt.Fprintf(out, "  store:   s3store.New with s3_threads N; N goroutines Put (staging, fsync) every object, then WaitUploaded\n")
	fmt.Fprintf(out, "  batched: s3store.New with s3_threads N; the objects staged %d at a time as the archive's commits stage them (NewBatch, one syncfs), then WaitUploaded\n", commitBatch)
	for _, t := range cfg.threads {
		res, err := uploadAll(ctx, srv, work, objs, t)
		if err != nil {
			return fmt.Errorf("upload, s3_threads %d: %w", t, err)
		}
		printUpload(out, res, size)
	}
	fmt.Fprintln(out)
	return nil
}

func uploadAll(ctx context.Context, srv *s3server, work string, objs [][]byte, t int) (uploadResult, error) {
	res := uploadResult{threads: t}
	var err error
	if res.plain, err = plainLoop(ctx, srv, fmt.Sprintf("plain%d", t), objs, t, bare); err != nil {
		return res, fmt.Errorf("plain: %w", err)
	}
	if res.sums, err = plainLoop(ctx, srv, fmt.Sprintf("sums%d", t), objs, t, sums); err != nil {
		return res, fmt.Errorf("sums: %w", err)
	}
	if res.checked, err = plainLoop(ctx, srv, fmt.Sprintf("checked%d", t), objs, t, sumsHead); err != nil {
		return res, fmt.Errorf("checked: %w", err)
	}
	if res.drain, err = storeDrain(ctx, srv, filepath.Join(work, fmt.Sprintf("drain%d", t)), objs, t); err != nil {
		return res, fmt.Errorf("drain: %w", err)
	}
	if res.store, err = storeFull(ctx, srv, filepath.Join(work, fmt.Sprintf("store%d", t)), objs, t); err != nil {
		return res, fmt.Errorf("store: %w", err)
	}
	if res.batched, err = storeBatched(ctx, srv, filepath.Join(work, fmt.Sprintf("batched%d", t)), objs, t); err != nil {
		return res, fmt.Errorf("batched: %w", err)
	}
	return res, nil
}

// sealedObjects are n corpus copies sealed as the archive seals a message file.
func sealedObjects(cfg *config, work string, n int) ([][]byte, error) {
	seeds, _, err := benchcorpus.Load(cfg.corpus)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(work, "upload-keys"))
	if err != nil {
		return nil, err
	}
	msgs := benchcorpus.Copies(seeds, n)
	for i, m := range msgs {
		if msgs[i], err = keys.Seal("default", m); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// newClient is an S3 client configured as s3store's (path style, static keys, checksums
// only where required).
func newClient(srv *s3server) *s3.Client {
	return s3.New(s3.Options{
		Region: s3store.DefaultRegion, BaseEndpoint: aws.String("http://" + srv.endpoint), UsePathStyle: true,
		Credentials:                credentials.NewStaticCredentialsProvider(srv.accessKey, srv.secretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// wire is what the plain loop sends for each object.
type wire int

const (
	bare     wire = iota // PutObject with the body and its length
	sums                 // and s3store's Content-MD5 and x-amz-checksum-sha256 headers
	sumsHead             // and then s3store's HeadObject
)

// plainLoop puts every object into a new bucket with t goroutines and counts them back.
func plainLoop(ctx context.Context, srv *s3server, name string, objs [][]byte, t int, w wire) (leg, error) {
	client, bucket := newClient(srv), srv.prefix+name
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		return leg{}, err
	}
	l, err := measure(srv, func() error {
		return forEach(ctx, len(objs), t, func(i int) error { return putOne(ctx, client, bucket, i, objs[i], w) })
	})
	if err != nil {
		return l, err
	}
	got, err := countObjects(ctx, client, bucket)
	if err == nil && got != len(objs) {
		err = fmt.Errorf("%d objects in the bucket; want %d", got, len(objs))
	}
	return l, err
}

func putOne(ctx context.Context, client *s3.Client, bucket string, i int, data []byte, w wire) error {
	in := &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(fmt.Sprintf("%d.m", i+1)),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
	if w >= sums {
		sum, md := sha256.Sum256(data), md5.Sum(data)
		in.ContentMD5 = aws.String(base64.StdEncoding.EncodeToString(md[:]))
		in.ChecksumSHA256 = aws.String(base64.StdEncoding.EncodeToString(sum[:]))
	}
	if _, err := client.PutObject(ctx, in); err != nil || w < sumsHead {
		return err
	}
	_, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: in.Key, ChecksumMode: types.ChecksumModeEnabled})
	return err
}

func countObjects(ctx context.Context, client *s3.Client, bucket string) (int, error) {
	n := 0
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: &bucket})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return n, err
		}
		n += len(page.Contents)
	}
	return n, nil
}

// forEach calls fn(i) for i in [0, n) on t goroutines; the first error stops it.
func forEach(ctx context.Context, n, t int, fn func(i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	next := make(chan int)
	for range t {
		g.Go(func() error {
			for i := range next {
				if err := fn(i); err != nil {
					return err
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(next)
		for i := range n {
			select {
			case next <- i:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	return g.Wait()
}
