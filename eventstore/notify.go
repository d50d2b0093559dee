package eventstore

import "sync"

// notifier wakes in-process subscribers as soon as an append commits, so that a consumer
// on the same node does not wait for its poll interval.
type notifier struct {
	mu   sync.Mutex
	head int64
	wake chan struct{}
}

func newNotifier() *notifier { return &notifier{wake: make(chan struct{})} }

func (n *notifier) broadcast(head int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if head > n.head {
		n.head = head
	}
	close(n.wake)
	n.wake = make(chan struct{})
}

// waiter returns a channel closed at the next broadcast.
func (n *notifier) waiter() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.wake
}

// Appended returns a channel that is closed when the next append on this Store commits.
func (s *Store) Appended() <-chan struct{} { return s.notify.waiter() }

// Notify wakes subscribers as if an append had committed; for callers of AppendTx after
// their commit.
func (s *Store) Notify(head int64) { s.notify.broadcast(head) }
