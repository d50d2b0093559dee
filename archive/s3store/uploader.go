package s3store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mailledger/mailledger/archive"
)

// retryDelay is how long a worker waits before it queues a failed upload again.
const retryDelay = 2 * time.Second

// uploader is the upload service: a queue of staged keys and the workers that empty it.
// It owns its goroutines; stop ends them.
type uploader struct {
	s       *Store
	threads int
	retry   time.Duration

	mu      sync.Mutex
	queue   []string
	queued  map[string]bool
	busy    int
	stopped bool
	changed chan struct{} // closed and replaced on every change of the fields above

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
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

// startWorkers starts the upload workers.
func (u *uploader) startWorkers() {
	for range u.threads {
		u.wg.Add(1)
		go u.work()
	}
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
		if err := u.s.uploadStaged(u.ctx, key); err != nil && u.ctx.Err() == nil {
			u.s.log.Warn("s3 upload failed; retrying", "key", key, "err", err)
			u.requeueLater(key)
		}
		u.finished()
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

// waitIdle waits until the queue is empty and no upload is under way.
func (u *uploader) waitIdle(ctx context.Context) error {
	for {
		u.mu.Lock()
		idle := len(u.queue) == 0 && u.busy == 0
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

// uploadStaged uploads the staged file of key and, once the store confirmed it, removes
// the staged file. A key no longer staged (deleted meanwhile) is done.
func (s *Store) uploadStaged(ctx context.Context, key string) error {
	loc, err := s.locate(key)
	if err != nil {
		return err
	}
	unlock := s.locks.lock(key)
	defer unlock()
	data, err := s.staging.Get(ctx, key)
	if errors.Is(err, archive.ErrBlobNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("s3 staging: %w", err)
	}
	if err := s.upload(ctx, loc, data); err != nil {
		return err
	}
	if err := s.staging.Delete(ctx, key); err != nil {
		return fmt.Errorf("s3 staging: remove uploaded %s: %w", key, err)
	}
	return nil
}
