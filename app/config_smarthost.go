package app

import (
	"log/slog"
	"strings"
	"time"
)

// SmarthostSettings are the SMARTHOST_* variables: the SMTP relay that restores archived
// mail to a mailbox (package smarthost checks and uses them). Addr empty: no restores.
type SmarthostSettings struct {
	Addr     string        // SMARTHOST_ADDR, host:port
	StartTLS string        // SMARTHOST_STARTTLS: opportunistic (default), required or off
	CAFile   string        // SMARTHOST_CA_FILE: PEM certificates that verify the relay
	User     string        // SMARTHOST_USER: AUTH PLAIN user
	Password string        // SMARTHOST_PASSWORD; never logged
	From     string        // SMARTHOST_FROM: envelope sender; empty is the null sender
	Timeout  time.Duration // SMARTHOST_TIMEOUT: one delivery (60s)
}

// readSmarthost reads the SMARTHOST_* variables.
func (c *Config) readSmarthost(getenv func(string) string) error {
	c.Smarthost = SmarthostSettings{
		Addr:     strings.TrimSpace(getenv("SMARTHOST_ADDR")),
		StartTLS: strings.ToLower(strings.TrimSpace(getenv("SMARTHOST_STARTTLS"))),
		CAFile:   strings.TrimSpace(getenv("SMARTHOST_CA_FILE")),
		User:     getenv("SMARTHOST_USER"),
		Password: getenv("SMARTHOST_PASSWORD"),
		From:     strings.TrimSpace(getenv("SMARTHOST_FROM")),
	}
	var err error
	c.Smarthost.Timeout, err = parseDuration("SMARTHOST_TIMEOUT", strings.TrimSpace(getenv("SMARTHOST_TIMEOUT")))
	return err
}

// LogValue shows the relay without its password.
func (s SmarthostSettings) LogValue() slog.Value {
	if s.Addr == "" {
		return slog.StringValue("none")
	}
	return slog.GroupValue(slog.String("addr", s.Addr), slog.String("starttls", s.StartTLS),
		slog.String("user", s.User), slog.String("from", s.From))
}
