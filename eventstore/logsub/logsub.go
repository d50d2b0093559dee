// Package logsub delivers the ledger to background consumers as a watermill
// message.Subscriber, so that their handlers run under a watermill Router with its retry,
// poison-queue and recoverer middleware.
//
// The topic of a subscription is the consumer's name. Each consumer keeps one row in
// consumer_offsets: the last position it finished. Messages arrive one at a time, in
// position order; the next one is sent only after the current one was acked, and the
// offset moves only after that ack. Delivery is therefore at least once: a crash between
// a handler's side effect and the offset update delivers that one message again on the
// next start, and no event is ever skipped. A nacked message is delivered again after
// Config.NackDelay. Handlers must be idempotent.
//
// A message's payload is the event's payload after upcasting (eventstore.Record.Data), so
// a handler may unmarshal it straight into the newest version of the event struct. Its
// metadata carries the rest of the record under the Meta* keys, and Record rebuilds the
// whole eventstore.Record from a message. The message UUID is the position in decimal.
//
// Events appended through the same eventstore.Store wake a subscription at once
// (Store.Appended); events appended by other processes or nodes are found by polling every
// Config.PollInterval.
//
// A message that keeps failing is not dropped silently: PoisonPublisher, given to
// watermill's middleware.PoisonQueue, records it in consumer_poison with its error, and
// the consumer moves on.
package logsub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/mailledger/mailledger/eventstore"
)

// Sentinel errors of the subscriber.
var (
	// ErrClosed means the Subscriber was closed.
	ErrClosed = errors.New("log subscriber closed")
	// ErrAlreadySubscribed means the consumer already has a running subscription in this
	// Subscriber; two would deliver every event twice.
	ErrAlreadySubscribed = errors.New("consumer already subscribed")
	// ErrBadConsumer means a consumer name is empty, longer than 128 bytes or not UTF-8.
	ErrBadConsumer = errors.New("invalid consumer name")
	// ErrBadMessage means a message lacks the metadata of a ledger event.
	ErrBadMessage = errors.New("not a ledger event message")
)

// Config configures a Subscriber. The zero value takes every default.
type Config struct {
	// PollInterval is how often an idle subscription reads the log for events appended by
	// other processes; appends through the same Store wake it at once. Default 1 s.
	PollInterval time.Duration
	// BatchSize is how many events one read of the log fetches. Default 100.
	BatchSize int
	// NackDelay is the pause before a nacked message is delivered again. Default 100 ms.
	NackDelay time.Duration
	// SaveInterval bounds how long an acked offset may wait before it is saved. Default
	// 20 ms; negative saves after every ack.
	SaveInterval time.Duration
	// CloseTimeout is how long a stopping subscription waits for the message in flight to
	// be acked; after it, the message's context is cancelled and the message will be
	// delivered again on the next start. Default 30 s.
	CloseTimeout time.Duration
	// Logger receives read and offset errors; slog.Default() when nil.
	Logger *slog.Logger
	// OnOffset, when set, is called with a consumer's offset when it subscribes and after
	// every saved ack (for metrics).
	OnOffset func(consumer string, position int64)
}

func (c *Config) setDefaults() {
	if c.PollInterval == 0 {
		c.PollInterval = time.Second
	}
	if c.BatchSize == 0 {
		c.BatchSize = 100
	}
	if c.NackDelay == 0 {
		c.NackDelay = 100 * time.Millisecond
	}
	if c.CloseTimeout == 0 {
		c.CloseTimeout = 30 * time.Second
	}
	if c.SaveInterval == 0 {
		c.SaveInterval = 20 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var errs []error
	if c.PollInterval < 0 {
		errs = append(errs, fmt.Errorf("poll interval %v is negative", c.PollInterval))
	}
	if c.BatchSize < 0 {
		errs = append(errs, fmt.Errorf("batch size %d is negative", c.BatchSize))
	}
	if c.NackDelay < 0 {
		errs = append(errs, fmt.Errorf("nack delay %v is negative", c.NackDelay))
	}
	if c.CloseTimeout < 0 {
		errs = append(errs, fmt.Errorf("close timeout %v is negative", c.CloseTimeout))
	}
	return errors.Join(errs...)
}

// Subscriber is the ledger as a watermill message.Subscriber with durable, per-consumer
// offsets. It is safe for concurrent use; each consumer may have one subscription at a
// time.
type Subscriber struct {
	store *eventstore.Store
	cfg   Config

	mu      sync.Mutex
	active  map[string]bool
	closed  bool
	closing chan struct{}
	wg      sync.WaitGroup
}

var _ message.Subscriber = (*Subscriber)(nil)

// NewSubscriber returns a Subscriber reading store's log.
func NewSubscriber(store *eventstore.Store, cfg Config) (*Subscriber, error) {
	if store == nil {
		return nil, errors.New("logsub: nil store")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("logsub: %w", err)
	}
	cfg.setDefaults()
	return &Subscriber{store: store, cfg: cfg, active: map[string]bool{}, closing: make(chan struct{})}, nil
}

// Subscribe starts delivering the events after consumer's saved offset, one message at a
// time, and returns their channel. The channel is closed when ctx is done or the
// Subscriber closes, after the message in flight was acked (its offset then saved) or
// nacked, or after Config.CloseTimeout.
func (s *Subscriber) Subscribe(ctx context.Context, consumer string) (<-chan *message.Message, error) {
	if err := validConsumer(consumer); err != nil {
		return nil, err
	}
	if err := s.claim(consumer); err != nil {
		return nil, err
	}
	position, err := Offset(ctx, s.store.DB(), consumer)
	if err != nil {
		s.release(consumer)
		s.wg.Done()
		return nil, err
	}
	if s.cfg.OnOffset != nil {
		s.cfg.OnOffset(consumer, position)
	}
	sub := newSubscription(ctx, s, consumer, position)
	go sub.run()
	return sub.out, nil
}

// Close stops every subscription and waits until each has finished its message in flight
// (or given up on it after Config.CloseTimeout) and saved its offset. It is idempotent.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.closing)
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

func (s *Subscriber) claim(consumer string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.active[consumer] {
		return fmt.Errorf("%w: %s", ErrAlreadySubscribed, consumer)
	}
	s.active[consumer] = true
	s.wg.Add(1)
	return nil
}

// release frees consumer's name; the caller then calls s.wg.Done once its subscription
// has ended.
func (s *Subscriber) release(consumer string) {
	s.mu.Lock()
	delete(s.active, consumer)
	s.mu.Unlock()
}

func validConsumer(name string) error {
	if name == "" || len(name) > 128 || !utf8.ValidString(name) {
		return fmt.Errorf("%w: %q", ErrBadConsumer, name)
	}
	return nil
}
