package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/domain/fault"
)

// Defaults of the message reads.
const (
	// DefaultMaxTextBytes is how much text GET /messages/{id}/text shows: 1 MiB, a few
	// hundred pages. Longer text is cut and flagged; the whole message stays in /raw.
	DefaultMaxTextBytes = 1 << 20
	// DefaultBudgetWait is how long a message read waits for memory before it is
	// answered 503 busy.
	DefaultBudgetWait = 10 * time.Second
)

// ErrBusy means a message read could not get memory within MessagesConfig.BudgetWait:
// exports and other reads hold the whole budget. Retry later.
var ErrBusy = fault.New(fault.Unavailable, "busy")

// MessagesConfig configures the message reads. The zero value takes every default.
type MessagesConfig struct {
	// Budget is the memory budget of the reads, shared with the exports; nil gives the
	// reads a budget of DefaultMaxInFlightBytes of their own.
	Budget *MemoryBudget
	// BudgetWait is how long a read waits for its memory (DefaultBudgetWait when 0).
	BudgetWait time.Duration
	// MaxTextBytes bounds the text view (DefaultMaxTextBytes when 0).
	MaxTextBytes int
	// Smarthost delivers restored messages (SMARTHOST_ADDR); nil: restore answers
	// ErrNoSmarthost.
	Smarthost Smarthost
}

func (c *MessagesConfig) setDefaults() {
	if c.Budget == nil {
		c.Budget = NewMemoryBudget(DefaultMaxInFlightBytes)
	}
	if c.BudgetWait == 0 {
		c.BudgetWait = DefaultBudgetWait
	}
	if c.MaxTextBytes == 0 {
		c.MaxTextBytes = DefaultMaxTextBytes
	}
}

// Validate reports every invalid setting at once.
func (c MessagesConfig) Validate() error {
	var problems []error
	if c.BudgetWait < 0 {
		problems = append(problems, fmt.Errorf("%w: message read budget wait %v is negative", ErrConfig, c.BudgetWait))
	}
	if c.MaxTextBytes < 0 {
		problems = append(problems, fmt.Errorf("%w: message text limit %d bytes is negative", ErrConfig, c.MaxTextBytes))
	}
	return errors.Join(problems...)
}
