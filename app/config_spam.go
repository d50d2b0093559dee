package app

import (
	"fmt"
	"strings"
	"time"
)

// Spam policies (SPAM_POLICY): what happens to a message that carries SPAM_HEADER_LINE.
const (
	// SpamKeep stores it, marked as spam, with SPAM_RETENTION_DAYS (the default).
	SpamKeep = "keep"
	// SpamDiscard answers it as accepted and stores nothing (counted as discarded).
	SpamDiscard = "discard"
)

// readSpam reads SPAM_HEADER_LINE, SPAM_POLICY and SPAM_RETENTION_DAYS. Only surrounding
// white space is trimmed from the header line: a line break inside it is a second line,
// which Validate refuses.
func (c *Config) readSpam(getenv func(string) string) error {
	c.SpamHeader = strings.TrimSpace(getenv("SPAM_HEADER_LINE"))
	c.SpamPolicy = strings.ToLower(strings.TrimSpace(getenv("SPAM_POLICY")))
	var err error
	c.SpamRetentionDays, err = parseInt("SPAM_RETENTION_DAYS", strings.TrimSpace(getenv("SPAM_RETENTION_DAYS")))
	return err
}

// setSpamDefaults: the policy keep, and spam kept as long as other mail unless
// SPAM_RETENTION_DAYS says less.
func (c *Config) setSpamDefaults() {
	if c.SpamPolicy == "" {
		c.SpamPolicy = SpamKeep
	}
	if c.SpamRetentionDays == 0 {
		c.SpamRetentionDays = c.RetentionDays
	}
}

// validateSpam reports what is wrong with the spam settings: more than one header line
// (piler's spam_header_line holds exactly one), a line that is not "Name: value", an
// unknown policy, a spam retention longer than the retention of other mail, and a policy
// or retention set without a header line to apply it to.
func (c Config) validateSpam(bad func(format string, args ...any)) {
	if lines := strings.FieldsFunc(c.SpamHeader, func(r rune) bool { return r == '\n' || r == '\r' }); len(lines) > 1 {
		bad("SPAM_HEADER_LINE holds %d lines: exactly one header line (\"Name: value\") is supported", len(lines))
	} else if c.SpamHeader != "" {
		name, value, ok := strings.Cut(c.SpamHeader, ":")
		if !ok || !isFieldName(strings.TrimSpace(name)) || strings.TrimSpace(value) == "" {
			bad("SPAM_HEADER_LINE %q must be one header line, \"Name: value\"", c.SpamHeader)
		}
	}
	if c.SpamPolicy != SpamKeep && c.SpamPolicy != SpamDiscard {
		bad("SPAM_POLICY must be %q or %q, got %q", SpamKeep, SpamDiscard, c.SpamPolicy)
	}
	if c.SpamRetentionDays < 1 || c.SpamRetentionDays > c.RetentionDays {
		bad("SPAM_RETENTION_DAYS must be between 1 and MAILLEDGER_RETENTION_DAYS (%d), got %d", c.RetentionDays, c.SpamRetentionDays)
	}
	if c.SpamHeader == "" && (c.SpamPolicy != SpamKeep || c.SpamRetentionDays != c.RetentionDays) {
		bad("SPAM_POLICY and SPAM_RETENTION_DAYS need SPAM_HEADER_LINE, the line that marks spam")
	}
}

// isFieldName reports whether s is a header field name (RFC 5322: printable ASCII but
// the colon).
func isFieldName(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < 33 || s[i] > 126 || s[i] == ':' {
			return false
		}
	}
	return true
}

// SpamRetention is SpamRetentionDays as a duration.
func (c Config) SpamRetention() time.Duration {
	return time.Duration(c.SpamRetentionDays) * 24 * time.Hour
}

// DiscardSpam says whether spam is discarded instead of stored.
func (c Config) DiscardSpam() bool { return c.SpamPolicy == SpamDiscard }

// spamString describes the policy for the start-up log.
func (c Config) spamString() string {
	if c.SpamHeader == "" {
		return "none"
	}
	if c.DiscardSpam() {
		return fmt.Sprintf("%s: discard", c.SpamHeader)
	}
	return fmt.Sprintf("%s: keep %d days", c.SpamHeader, c.SpamRetentionDays)
}
