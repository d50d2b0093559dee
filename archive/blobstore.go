package archive

import (
	"sync"

	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/sync/errgroup"
)

// BlobStore is where sealed message files live: the local file system or, later, an
// S3-compatible object store. Keys are slash-separated relative names such as
// "default/3f/00/1234.m".
type BlobStore interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
	Delete(ctx context.Context, key string) error
	// List calls fn with every key under prefix, in no particular order.
	List(ctx context.Context, prefix string, fn func(key string) error) error
}

// FileBatch writes the files of one commit on other goroutines while its caller goes on;
// Wait returns once every file, and the rename that named it, is durable (or the first
// error). Add is called from one goroutine, and not after Wait.
type FileBatch interface {
	Add(key string, data []byte)
	Wait() error
}

// BatchStore is a BlobStore that makes a commit's files durable together, cheaper than a
// durable Put each (LocalStore: one syncfs(2) for the batch; s3store: the same in its
// staging directory). Commit uses it where the store has it.
type BatchStore interface {
	BlobStore
	NewBatch(ctx context.Context) FileBatch
}

// ErrBlobNotFound means no file exists under a key.
var ErrBlobNotFound = errors.New("message file not found")

// ErrBadKey means a key is not a safe relative name.
var ErrBadKey = errors.New("bad storage key")

var keyPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`)

// validKey refuses anything but plain relative names: no "..", no absolute paths.
func validKey(key string) error {
	if !keyPattern.MatchString(key) || strings.Contains(key, "..") {
		return fmt.Errorf("%w: %q", ErrBadKey, key)
	}
	return nil
}

// MessageKey is the storage key of message id of tenant: <tenant>/<xx>/<yy>/<id>.m, where
// xx and yy are the third and second bytes of the id in hex: 256 consecutive ids share a
// folder (so a batch of new messages syncs few folders), and 16.7 million messages spread
// over 65,536 folders.
func MessageKey(tenant string, id int64) string {
	return fmt.Sprintf("%s/%02x/%02x/%d.m", tenant, (id>>16)&0xff, (id>>8)&0xff, id)
}

// LocalStore keeps files under one root directory.
type LocalStore struct {
	root string
}

var _ BlobStore = (*LocalStore)(nil)

// NewLocalStore returns a store rooted at dir, creating it. Its folders are 0700 and its
// files 0600: readable by the service's user only.
func NewLocalStore(dir string) (*LocalStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &LocalStore{root: dir}, nil
}

func (s *LocalStore) path(key string) (string, error) {
	if err := validKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

// Put writes data atomically: a temporary file in the same folder, fsync, rename, fsync
// of the folder. A crash leaves either the old file or the new one, never half of one.
func (s *LocalStore) Put(_ context.Context, key string, data []byte) error {
	dir, err := s.place(key, data, true)
	if err != nil {
		return err
	}
	return syncDir(dir)
}

// PutBatch writes every file atomically as Put does (a temporary file renamed into
// place), on a few goroutines, and returns once all of them are durable: on Linux through
// one syncfs(2) after the last rename rather than an fsync per file and folder (see
// syncAll).
func (s *LocalStore) PutBatch(ctx context.Context, files map[string][]byte) error {
	b := s.NewBatch(ctx)
	for key, data := range files {
		b.Add(key, data)
	}
	return b.Wait()
}

// NewBatch starts a batch of PutBatch's writes.
func (s *LocalStore) NewBatch(ctx context.Context) FileBatch { return s.newBatch(ctx, nil) }

// NewLockedBatch is NewBatch for a store in front of this one (s3store's staging
// directory): lock(key) is held while key's file is written and renamed into place.
func (s *LocalStore) NewLockedBatch(ctx context.Context, lock func(key string) (unlock func())) FileBatch {
	return s.newBatch(ctx, lock)
}

// putWriters bounds the parallel file writes of one batch.
const putWriters = 8

// localBatch writes files on a few goroutines while its caller goes on (Commit inserts the
// rows meanwhile); wait returns once every file, and the rename that named it, is durable.
// Commit waits for it before its transaction commits, so a committed row always has its
// whole file, whatever the crash. A crash before that may leave files no row names (never
// served; an id given again later renames its new file over such a leftover).
type localBatch struct {
	s    *LocalStore
	g    *errgroup.Group
	lock func(key string) (unlock func()) // nil: none
	mu   sync.Mutex
	dirs map[string]bool
}

func (s *LocalStore) newBatch(ctx context.Context, lock func(string) func()) *localBatch {
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(putWriters)
	return &localBatch{s: s, g: g, lock: lock, dirs: map[string]bool{}}
}

func (b *localBatch) Add(key string, data []byte) {
	b.g.Go(func() error {
		if b.lock != nil {
			defer b.lock(key)()
		}
		dir, err := b.s.place(key, data, perFileSync)
		if err == nil {
			b.mu.Lock()
			b.dirs[dir] = true
			b.mu.Unlock()
		}
		return err
	})
}

func (b *localBatch) Wait() error {
	if err := b.g.Wait(); err != nil {
		return err
	}
	return syncAll(b.s.root, b.dirs)
}

// place writes data to a temporary file (fsynced when sync is set) and renames it to key's
// path; it returns the folder, which the caller must sync for the rename to be durable.
func (s *LocalStore) place(key string, data []byte, sync bool) (string, error) {
	p, err := s.path(key)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".put-*") // mode 0600
	if err != nil {
		return "", err
	}
	if err := writeAndSync(tmp, data, sync); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return dir, nil
}

func writeAndSync(f *os.File, data []byte, sync bool) error {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if !sync {
		return f.Close()
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Get reads the file under key.
func (s *LocalStore) Get(ctx context.Context, key string) ([]byte, error) {
	data, _, err := s.GetFile(ctx, key)
	return data, err
}

// GetFile is Get with the file's FileInfo, read from the same open file: DeleteIfSame
// then removes exactly the file that was read.
func (s *LocalStore) GetFile(_ context.Context, key string) ([]byte, fs.FileInfo, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %s", ErrBlobNotFound, key)
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", key, err)
	}
	return data, fi, nil
}

// DeleteIfSame removes the file under key if it is still the file fi describes (same
// inode, size and modification time), and reports whether it did: a file written under
// key since (renamed over it) stays. A missing file is not an error.
func (s *LocalStore) DeleteIfSame(_ context.Context, key string, fi fs.FileInfo) (bool, error) {
	p, err := s.path(key)
	if err != nil {
		return false, err
	}
	now, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !os.SameFile(now, fi) || now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		return false, nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}

// Delete removes the file under key; a missing file is not an error (deletes are retried).
func (s *LocalStore) Delete(_ context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// List walks the files under prefix.
func (s *LocalStore) List(ctx context.Context, prefix string, fn func(key string) error) error {
	start := s.root
	if prefix != "" {
		p, err := s.path(strings.TrimSuffix(prefix, "/"))
		if err != nil {
			return err
		}
		start = p
	}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".put-") {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(s.root, p)
		return fn(filepath.ToSlash(rel))
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
