package app

import (
	"fmt"
	"time"
)

// Console session idle limits (CONSOLE_SESSION_IDLE).
const (
	DefaultConsoleSessionIdle = 30 * time.Minute
	MaxConsoleSessionIdle     = 24 * time.Hour
)

// readConsole reads CONSOLE_SESSION_IDLE, how long a web console session lives unused:
// DefaultConsoleSessionIdle when unset, a positive duration of at most
// MaxConsoleSessionIdle otherwise.
func (c *Config) readConsole(getenv func(string) string) error {
	d, err := parseDuration("CONSOLE_SESSION_IDLE", getenv("CONSOLE_SESSION_IDLE"))
	if err != nil {
		return err
	}
	if d > MaxConsoleSessionIdle {
		return fmt.Errorf("%w: CONSOLE_SESSION_IDLE must be at most %v, got %v", ErrConfig, MaxConsoleSessionIdle, d)
	}
	if d == 0 {
		d = DefaultConsoleSessionIdle
	}
	c.ConsoleSessionIdle = d
	return nil
}
