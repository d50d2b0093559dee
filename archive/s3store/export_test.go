package s3store

import (
	"context"
	"io/fs"
)

// ObjectNames lists the objects of bucket, for tests that count uploads.
func (s *Store) ObjectNames(ctx context.Context, bucket string) ([]string, error) {
	var names []string
	err := s.walkBucket(ctx, bucket, func(object string, _ int64) error {
		names = append(names, object)
		return nil
	})
	return names, err
}

// Upload uploads data to key's object directly, as an earlier run that crashed before it
// removed the staged file would have.
func (s *Store) Upload(ctx context.Context, key string, data []byte) error {
	loc, err := s.locate(key)
	if err != nil {
		return err
	}
	return s.upload(ctx, loc, data)
}

// NewPaused opens a store whose upload workers have not started: Puts stay staged, as
// after a crash before the upload, until Resume.
func NewPaused(cfg Config) (*Store, error) { return newStore(cfg, nil) }

// Resume starts the upload workers of a store made by NewPaused.
func (s *Store) Resume() { s.up.startWorkers() }

// UploadStaged uploads key's staged file as a worker does, without removing it; the
// FileInfo it returns is what the worker hands to the remover.
func (s *Store) UploadStaged(ctx context.Context, key string) (fs.FileInfo, error) {
	return s.uploadStaged(ctx, key)
}

// RemoveStaged is the remover's work for one uploaded file.
func (s *Store) RemoveStaged(key string, fi fs.FileInfo) { s.removeStaged(removal{key: key, fi: fi}) }
