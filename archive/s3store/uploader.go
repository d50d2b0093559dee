package s3store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/mailledger/mailledger/archive"
)

// retryDelay is how long a worker waits before it queues a failed upload again.
const retryDelay = 2 * time.Second

// maxRemovals bounds the uploaded files waiting for the remover; past it a worker removes
// its file itself.
const maxRemovals = 4096

// uploader is the upload service: a queue of staged keys and the workers that empty it,
// and a remover that deletes the staged files the workers uploaded, off their path (an
// unlink costs about as much as a small upload's round trip on some file systems). It
// owns its goroutines; stop ends them.
type uploader struct {
	s       *Store
	threads int
	retry   time.Duration

	mu       sync.Mutex
	queue    []string
	queued   map[string]bool
	busy     int
	removals []removal // uploaded, their staged files not yet removed
	removing int       // taken by the remover, not done yet
	stopped  bool
	changed  chan struct{} // closed and replaced on every change of the fields above

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// removal is a staged file whose upload the store confirmed: the file as it was read, so
// that one staged again under the key since (a Put of the same message) is kept.
type removal struct {
	key string
	fi  fs.FileInfo
}

func newUploader(s *Store, threads int) *uploader {
	ctx, cancel := context.WithCancel(context.Background())
	return &uploader{s: s, threads: threads, retry: retryDelay, queued: map[string]bool{},
		changed: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// scan queues every file already staged (left by an earlier run).
func (u *uploader) scan() error {
	err := u.s.staging.List(u.ctx, "", func(key string) error {
		if _, err := u.s.locate(key); err != nil {
			u.s.log.Warn("s3 staging: a file that is no message key stays where it is", "key", key)
			return nil
		}
		u.enqueue(key)
		return nil
	})
	if err != nil {
		u.cancel()
		return fmt.Errorf("s3 staging scan: %w", err)
	}
	return nil
}

// startWorkers starts the upload workers and the remover.
func (u *uploader) startWorkers() {
	for range u.threads {
		u.wg.Add(1)
		go u.work()
	}
	u.wg.Add(1)
	go u.remove()
}

// broadcast wakes everyone waiting for a change; u.mu is held.
func (u *uploader) broadcast() {
	close(u.changed)
	u.changed = make(chan struct{})
}

func (u *uploader) enqueue(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.queued[key] {
		u.queued[key] = true
		u.queue = append(u.queue, key)
		u.broadcast()
	}
}

// next takes a key from the queue, waiting for one; false once stopped.
func (u *uploader) next() (string, bool) {
	for {
		u.mu.Lock()
		if u.stopped {
			u.mu.Unlock()
			return "", false
		}
		if len(u.queue) > 0 {
			key := u.queue[0]
			u.queue = u.queue[1:]
			delete(u.queued, key) // a Put during the upload queues it again
			u.busy++
			u.mu.Unlock()
			return key, true
		}
		ch := u.changed
		u.mu.Unlock()
		select {
		case <-ch:
		case <-u.ctx.Done():
		}
	}
}

func (u *uploader) finished() {
	u.mu.Lock()
	u.busy--
	u.broadcast()
	u.mu.Unlock()
}

func (u *uploader) work() {
	defer u.wg.Done()
	for {
		key, ok := u.next()
		if !ok {
			return
		}
		fi, err := u.s.uploadStaged(u.ctx, key)
		if err != nil && u.ctx.Err() == nil {
			u.s.log.Warn("s3 upload failed; retrying", "key", key, "err", err)
			u.requeueLater(key)
		}
		if r := (removal{key: key, fi: fi}); fi != nil && !u.handOver(r) {
			u.s.removeStaged(r)
		}
		u.finished()
	}
}

// handOver queues r for the remover; false when the remover has enough to do (or is
// gone): the caller removes the file itself.
func (u *uploader) handOver(r removal) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stopped || len(u.removals) >= maxRemovals {
		return false
	}
	u.removals = append(u.removals, r)
	u.broadcast()
	return true
}

// remove is the remover: it deletes the uploaded staged files handed over, and on stop
// those still queued before it returns (local unlinks: they do not wait for the store).
// A removal lost in a crash only means a second upload of the same bytes at the next
// start.
func (u *uploader) remove() {
	defer u.wg.Done()
	for {
		u.mu.Lock()
		batch := u.removals
		u.removals = nil
		u.removing = len(batch)
		stopped := u.stopped
		ch := u.changed
		u.mu.Unlock()
		for _, r := range batch {
			u.s.removeStaged(r)
		}
		if len(batch) > 0 {
			u.mu.Lock()
			u.removing = 0
			u.broadcast()
			u.mu.Unlock()
			continue
		}
		if stopped {
			return
		}
		<-ch
	}
}

// requeueLater waits the retry delay (or until stopped) and queues key again.
func (u *uploader) requeueLater(key string) {
	t := time.NewTimer(u.retry)
	defer t.Stop()
	select {
	case <-t.C:
		u.enqueue(key)
	case <-u.ctx.Done():
	}
}

// waitIdle waits until the queue is empty, no upload is under way and every uploaded
// staged file is removed.
func (u *uploader) waitIdle(ctx context.Context) error {
	for {
		u.mu.Lock()
		idle := len(u.queue) == 0 && u.busy == 0 && len(u.removals) == 0 && u.removing == 0
		ch := u.changed
		u.mu.Unlock()
		if idle {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stop ends the workers and waits for them; an upload under way is cancelled and its
// file stays staged.
func (u *uploader) stop() error {
	u.mu.Lock()
	if !u.stopped {
		u.stopped = true
		u.broadcast()
	}
	u.mu.Unlock()
	u.cancel()
	u.wg.Wait()
	return nil
}

// uploadStaged uploads the staged file of key and returns its FileInfo once the store
// confirmed it: the staged file may then be removed (removeStaged). A key no longer
// staged (deleted meanwhile) is done: nil, nil.
func (s *Store) uploadStaged(ctx context.Context, key string) (fs.FileInfo, error) {
	loc, err := s.locate(key)
	if err != nil {
		return nil, err
	}
	unlock := s.locks.lock(key)
	defer unlock()
	data, fi, err := s.staging.GetFile(ctx, key)
	if errors.Is(err, archive.ErrBlobNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("s3 staging: %w", err)
	}
	if err := s.upload(ctx, loc, data); err != nil {
		return nil, err
	}
	return fi, nil
}

// removeStaged removes r's staged file if it is still the one uploaded: a Put or a commit
// that staged the key again since renamed a new file over it, which stays (and is queued
// for its own upload). A failure is logged: the file is uploaded again at the next start.
func (s *Store) removeStaged(r removal) {
	unlock := s.locks.lock(r.key)
	defer unlock()
	if _, err := s.staging.DeleteIfSame(context.Background(), r.key, r.fi); err != nil {
		s.log.Warn("s3 staging: could not remove an uploaded file; it is uploaded again at the next start", "key", r.key, "err", err)
	}
}
