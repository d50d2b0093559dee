package app

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// MemoryBudget bounds the bytes of messages that the eDiscovery exports and the message
// reads (GET /messages/{id}/raw and /text) hold in memory at once, all together. A holder
// takes a weight (the bytes it will hold, at most the whole budget: a larger message is
// read alone) and gives it back when done. It is safe for concurrent use.
type MemoryBudget struct {
	size  int64
	sem   *semaphore.Weighted
	inUse atomic.Int64
}

// NewMemoryBudget returns a budget of size bytes (DefaultMaxInFlightBytes when size <= 0).
func NewMemoryBudget(size int64) *MemoryBudget {
	if size <= 0 {
		size = DefaultMaxInFlightBytes
	}
	return &MemoryBudget{size: size, sem: semaphore.NewWeighted(size)}
}

// Size is the whole budget in bytes.
func (b *MemoryBudget) Size() int64 { return b.size }

// InUse is how many bytes the holders hold now; it never exceeds Size.
func (b *MemoryBudget) InUse() int64 { return b.inUse.Load() }

// Acquire waits until bytes (at least 1, at most Size) are free, or ctx is done, and
// returns the weight taken, which the caller gives back with Release.
func (b *MemoryBudget) Acquire(ctx context.Context, bytes int64) (int64, error) {
	weight := min(max(bytes, 1), b.size)
	if err := b.sem.Acquire(ctx, weight); err != nil {
		return 0, err
	}
	b.inUse.Add(weight)
	return weight, nil
}

// Release gives back a weight that Acquire returned.
func (b *MemoryBudget) Release(weight int64) {
	if weight > 0 {
		b.inUse.Add(-weight)
		b.sem.Release(weight)
	}
}
