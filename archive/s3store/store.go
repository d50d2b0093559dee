// Package s3store is the archive's object store: an archive.BlobStore over an
// S3-compatible server, with a local staging directory in front of it.
//
// Rules:
//  1. Put writes the file to the staging directory (s3_dir) atomically and fsynced, as
//     archive.LocalStore does, and returns: a returned Put is durable.
//  2. An upload service of s3_threads workers copies each staged file to its tenant's
//     bucket and removes the staged file only once the store confirms its size and
//     checksum (a remover goroutine deletes it, off the workers' path; a file staged again
//     under the key meanwhile stays). A restart scans the staging directory and uploads
//     what is left.
//  3. Get reads the staged file if there is one, else the object.
//  4. Delete removes the file from both places; it waits for an upload of the same key.
//  5. Keys are archive.MessageKey(tenant, id): one bucket per tenant (s3_bucket_prefix +
//     tenant), the object "<id>.m" or, with s3_use_subdirs, "<hh>/<id>.m".
package s3store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mailledger/mailledger/archive"
)

// Mode is the storage mode this store records in the database (archive.StorageMode).
const Mode = "s3"

// Store is an archive.BlobStore over an S3-compatible object store. Close it to stop its
// upload workers.
type Store struct {
	cfg     Config
	client  *s3.Client
	staging *archive.LocalStore
	log     *slog.Logger
	locks   keyLocks
	buckets sync.Map // bucket name → struct{}: known to exist
	up      *uploader
}

var _ archive.BatchStore = (*Store)(nil)

// New validates cfg, opens the staging directory (0700) and starts the upload workers,
// which first queue every file already staged. logger may be nil (no logging). It does
// not contact the store: an unreachable store delays uploads, not Puts.
func New(cfg Config, logger *slog.Logger) (*Store, error) {
	s, err := newStore(cfg, logger)
	if err != nil {
		return nil, err
	}
	s.up.startWorkers()
	return s, nil
}

// newStore is New without the workers: the staged files are queued, nothing uploads.
func newStore(cfg Config, logger *slog.Logger) (*Store, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	staging, err := archive.NewLocalStore(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("s3 staging directory: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{cfg: cfg, client: newClient(cfg), staging: staging, log: logger}
	s.up = newUploader(s, cfg.Threads)
	if err := s.up.scan(); err != nil {
		return nil, err
	}
	return s, nil
}

// newClient makes the S3 client: path-style addressing (bucket names may hold dots,
// and S3-compatible servers seldom serve virtual hosts), static keys, and checksums only
// where the API requires them (the uploader sends its own SHA-256).
func newClient(cfg Config) *s3.Client {
	scheme := "https://"
	if !cfg.Secure {
		scheme = "http://"
	}
	return s3.New(s3.Options{
		Region:       cfg.Region,
		BaseEndpoint: aws.String(scheme + cfg.Hostname),
		UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(
			cfg.AccessKey.Reveal(), cfg.SecretKey.Reveal(), ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// StorageMode is "s3": the archive records it at its first message and refuses to start
// later with another mode.
func (s *Store) StorageMode() string { return Mode }

// Close stops the upload workers: an upload under way is abandoned (its file stays
// staged and is uploaded after the next start). Files still staged stay there.
func (s *Store) Close() error { return s.up.stop() }

// WaitUploaded waits until no file is queued or being uploaded, or ctx is done.
func (s *Store) WaitUploaded(ctx context.Context) error { return s.up.waitIdle(ctx) }

// Put writes data to the staging directory (atomic, fsynced, 0600) and queues its upload.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if _, err := s.locate(key); err != nil {
		return err
	}
	unlock := s.locks.lock(key)
	err := s.staging.Put(ctx, key, data)
	unlock()
	if err != nil {
		return fmt.Errorf("s3 staging: %w", err)
	}
	s.up.enqueue(key)
	return nil
}

// NewBatch writes a commit's files to the staging directory as one durable batch (the
// staging store's batch: one syncfs(2) for all of them instead of an fsync of each file
// and its folder, as Put does) and queues their uploads once all are durable (rule 1
// holds for the batch as a whole: a Wait that returned nil is durable).
func (s *Store) NewBatch(ctx context.Context) archive.FileBatch {
	return &stagedBatch{s: s, local: s.staging.NewLockedBatch(ctx, s.locks.lock)}
}

// stagedBatch is NewBatch's archive.FileBatch.
type stagedBatch struct {
	s     *Store
	local archive.FileBatch
	keys  []string
	err   error // the first key that is no message key
}

func (b *stagedBatch) Add(key string, data []byte) {
	if _, err := b.s.locate(key); err != nil {
		if b.err == nil {
			b.err = err
		}
		return
	}
	b.keys = append(b.keys, key)
	b.local.Add(key, data)
}

// Wait waits for the staged files and queues their uploads; after an error nothing is
// queued by the batch (files it staged are uploaded after the next start, as after a
// crash, and a message id given again renames its new file over them).
func (b *stagedBatch) Wait() error {
	err := b.local.Wait()
	if b.err != nil {
		return b.err
	}
	if err != nil {
		return fmt.Errorf("s3 staging: %w", err)
	}
	for _, key := range b.keys {
		b.s.up.enqueue(key)
	}
	return nil
}

// Get returns the staged file, or else the uploaded object. The staged file is removed
// only after its upload is confirmed, so a file missed in staging is in the store.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	loc, err := s.locate(key)
	if err != nil {
		return nil, err
	}
	data, err := s.staging.Get(ctx, key)
	if !errors.Is(err, archive.ErrBlobNotFound) {
		return data, err
	}
	return s.getObject(ctx, loc)
}

// Delete removes the file from the staging directory and from the store; a file in
// neither is not an error (deletes are retried).
func (s *Store) Delete(ctx context.Context, key string) error {
	loc, err := s.locate(key)
	if err != nil {
		return err
	}
	unlock := s.locks.lock(key)
	defer unlock()
	if err := s.staging.Delete(ctx, key); err != nil {
		return fmt.Errorf("s3 staging: %w", err)
	}
	return s.deleteObject(ctx, loc)
}

// List calls fn with every key under prefix, staged or uploaded, each once.
func (s *Store) List(ctx context.Context, prefix string, fn func(key string) error) error {
	staged := map[string]bool{}
	err := s.staging.List(ctx, prefix, func(key string) error {
		staged[key] = true
		return fn(key)
	})
	if err != nil {
		return err
	}
	return s.listObjects(ctx, prefix, func(key string) error {
		if staged[key] {
			return nil
		}
		return fn(key)
	})
}
