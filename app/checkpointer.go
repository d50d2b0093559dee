package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mailledger/mailledger/eventstore"
)

// CheckpointerConfig configures a Checkpointer. The zero value takes every default.
type CheckpointerConfig struct {
	// Every signs a checkpoint once this many events were appended since the newest
	// one. Default 1000.
	Every int64
	// Interval signs a checkpoint of newer events at least this often. Default 60 s.
	Interval time.Duration
	// Poll is how often the head is read for appends of other processes; appends through
	// the same Store are seen at once. Default 1 s.
	Poll time.Duration
	// Logger receives signing errors; slog.Default() when nil.
	Logger *slog.Logger
}

func (c *CheckpointerConfig) setDefaults() {
	if c.Every == 0 {
		c.Every = 1000
	}
	if c.Interval == 0 {
		c.Interval = time.Minute
	}
	if c.Poll == 0 {
		c.Poll = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate reports every invalid setting at once.
func (c CheckpointerConfig) Validate() error {
	var errs []error
	if c.Every < 0 {
		errs = append(errs, fmt.Errorf("checkpoint every %d events is negative", c.Every))
	}
	if c.Interval < 0 {
		errs = append(errs, fmt.Errorf("checkpoint interval %v is negative", c.Interval))
	}
	if c.Poll < 0 {
		errs = append(errs, fmt.Errorf("checkpoint poll %v is negative", c.Poll))
	}
	return errors.Join(errs...)
}

// Checkpointer signs checkpoints of the ledger head: when Every events were appended
// since the newest checkpoint, at each Interval when the head moved, and on demand. It
// watches the head rather than consuming every event, so it costs one head read per
// commit and no offset writes. A checkpoint covers the head at signing time, so its size
// may exceed a multiple of Every by the events appended meanwhile.
type Checkpointer struct {
	store  *eventstore.Store
	signer *eventstore.Signer
	cfg    CheckpointerConfig

	mu     sync.Mutex // serialises signing
	signed int64      // size of the newest checkpoint known
}

// NewCheckpointer returns a Checkpointer signing store's head with signer.
func NewCheckpointer(store *eventstore.Store, signer *eventstore.Signer, cfg CheckpointerConfig) (*Checkpointer, error) {
	if store == nil || signer == nil {
		return nil, errors.New("app: checkpointer needs a store and a signer")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("checkpointer: %w", err)
	}
	cfg.setDefaults()
	return &Checkpointer{store: store, signer: signer, cfg: cfg}, nil
}

// Checkpoint signs a checkpoint of the current head now, unless the newest checkpoint
// already covers it, and returns the newest checkpoint.
func (c *Checkpointer) Checkpoint(ctx context.Context) (*eventstore.Checkpoint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp, err := c.signer.Sign(ctx)
	if err != nil {
		return nil, err
	}
	c.signed = max(c.signed, cp.Size)
	return cp, nil
}

// Run signs checkpoints until ctx is done; it then returns nil. Signing errors are logged
// and retried at the next append, poll or interval.
func (c *Checkpointer) Run(ctx context.Context) error {
	c.loadSigned(ctx)
	interval := time.NewTicker(c.cfg.Interval)
	defer interval.Stop()
	poll := time.NewTicker(c.cfg.Poll)
	defer poll.Stop()
	for {
		wake := c.store.Appended()
		c.signIf(ctx, func(head, signed int64) bool { return head-signed >= c.cfg.Every })
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-poll.C:
		case <-interval.C:
			c.signIf(ctx, func(head, signed int64) bool { return head > signed })
		}
	}
}

func (c *Checkpointer) loadSigned(ctx context.Context) {
	cp, err := c.store.LatestCheckpoint(ctx)
	if err != nil {
		if !errors.Is(err, eventstore.ErrNotFound) {
			c.cfg.Logger.Warn("read latest checkpoint", "error", err.Error())
		}
		return
	}
	c.mu.Lock()
	c.signed = max(c.signed, cp.Size)
	c.mu.Unlock()
}

// signIf signs a checkpoint when due(head size, newest signed size) holds.
func (c *Checkpointer) signIf(ctx context.Context, due func(head, signed int64) bool) {
	head, err := c.store.Head(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.cfg.Logger.Warn("read ledger head for checkpoint", "error", err.Error())
		}
		return
	}
	c.mu.Lock()
	signed := c.signed
	c.mu.Unlock()
	if !due(head.Size, signed) {
		return
	}
	if _, err := c.Checkpoint(ctx); err != nil && ctx.Err() == nil {
		c.cfg.Logger.Warn("checkpoint not signed", "error", err.Error())
	}
}
