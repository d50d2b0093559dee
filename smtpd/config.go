// Package smtpd is the archive's SMTP receiver: it takes mail on SMTP_ADDR with
// github.com/emersion/go-smtp and archives each message through archive.Archive, answering
// 250 only once the message file is durable and its rows are committed.
package smtpd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrConfig marks a configuration problem of the receiver (the binary exits with code 2).
var ErrConfig = errors.New("configuration")

// Defaults of the receiver's settings (docs/operations.md).
const (
	DefaultAddr              = "127.0.0.1:2525"
	DefaultMaxMessageBytes   = 50 << 20
	DefaultMaxRecipients     = 100
	DefaultMaxConnections    = 100
	DefaultMaxConnectionsIP  = 50
	DefaultIdleTimeout       = 5 * time.Minute
	DefaultDataTimeout       = 10 * time.Minute
	DefaultWriteTimeout      = time.Minute
	DefaultMaxInFlightBytes  = 256 << 20
	DefaultMaxBatchMessages  = 200
	DefaultCommitLinger      = 2 * time.Millisecond
	maxCommitters            = 16
	DefaultMaxBatchBytes     = 64 << 20
	defaultTenant            = "default" // the one tenant of single-tenant mode (app.DefaultTenant)
	defaultCertName, keyName = "smtp.crt", "smtp.key"
)

// Config is the receiver's configuration, read by ConfigFromEnv.
type Config struct {
	// Addr is SMTP_ADDR, the listen address.
	Addr string
	// Hostname is SMTP_HOSTNAME, the name in the greeting (default: the host's name).
	Hostname string
	// MaxMessageBytes is SMTP_MAX_MESSAGE_BYTES: a larger message gets 552 and nothing of
	// it is stored; the limit is enforced while DATA or BDAT is read.
	MaxMessageBytes int64
	// MaxRecipients is SMTP_MAX_RECIPIENTS, the RCPT TO commands one message may have.
	MaxRecipients int
	// MaxConnections is SMTP_MAX_CONNECTIONS, the connections served at once; further
	// ones get 421 and are closed.
	MaxConnections int
	// MaxConnectionsPerIP is SMTP_MAX_CONNECTIONS_PER_IP, the same for one client address.
	MaxConnectionsPerIP int
	// IdleTimeout is SMTP_IDLE_TIMEOUT: a command, or the next piece of a message, must
	// arrive within it.
	IdleTimeout time.Duration
	// DataTimeout is SMTP_DATA_TIMEOUT, the time one message's DATA or BDAT may take
	// in all, however slowly it trickles in.
	DataTimeout time.Duration
	// WriteTimeout bounds each reply's write (SMTP_WRITE_TIMEOUT).
	WriteTimeout time.Duration
	// MaxInFlightBytes is SMTP_MAX_INFLIGHT_BYTES, the bytes of messages being received
	// and committed held at once by all sessions together; a message that would pass it
	// gets 452 (try again later).
	MaxInFlightBytes int64
	// StartTLS is SMTP_STARTTLS (on unless 0): offer STARTTLS.
	StartTLS bool
	// CertFile and KeyFile are SMTP_TLS_CERT_FILE and SMTP_TLS_KEY_FILE; unset, a
	// self-signed certificate is created on first start under the data dir (tls/).
	CertFile, KeyFile string
	// Tenants says which tenant a recipient's mail is archived for
	// (SMTP_TENANT_DOMAINS, SMTP_DEFAULT_TENANT).
	Tenants Tenants
	// MaxBatchMessages and MaxBatchBytes bound one group commit.
	MaxBatchMessages int
	MaxBatchBytes    int
	// CommitLinger is how long a group commit waits for one more message before it
	// starts (SMTP_COMMIT_LINGER), while some open session has no message in the commit;
	// DefaultCommitLinger when 0, none when negative.
	CommitLinger time.Duration
	// Committers is SMTP_COMMITTERS, how many group commits run at once, each in its own
	// transaction: while one waits for the disk, the next gathers the messages that
	// arrive meanwhile. 0: archive.Archive.Committers (2 on MySQL, 1 elsewhere).
	Committers int
}

// ConfigFromEnv reads the SMTP_* variables with getenv; dataDir is MAILLEDGER_DATA_DIR,
// under which the self-signed certificate lives. The error joins every problem found,
// each wrapping ErrConfig.
func ConfigFromEnv(getenv func(string) string, dataDir string) (Config, error) {
	var problems []error
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	c := Config{Addr: strings.TrimSpace(getenv("SMTP_ADDR")), Hostname: strings.TrimSpace(getenv("SMTP_HOSTNAME")),
		CertFile: strings.TrimSpace(getenv("SMTP_TLS_CERT_FILE")), KeyFile: strings.TrimSpace(getenv("SMTP_TLS_KEY_FILE")), StartTLS: true}
	readInt(getenv, "SMTP_MAX_MESSAGE_BYTES", &c.MaxMessageBytes, bad)
	readInt(getenv, "SMTP_MAX_INFLIGHT_BYTES", &c.MaxInFlightBytes, bad)
	var rcpts, conns, perIP int64
	readInt(getenv, "SMTP_MAX_RECIPIENTS", &rcpts, bad)
	readInt(getenv, "SMTP_MAX_CONNECTIONS", &conns, bad)
	readInt(getenv, "SMTP_MAX_CONNECTIONS_PER_IP", &perIP, bad)
	c.MaxRecipients, c.MaxConnections, c.MaxConnectionsPerIP = int(rcpts), int(conns), int(perIP)
	readDuration(getenv, "SMTP_IDLE_TIMEOUT", &c.IdleTimeout, bad)
	readDuration(getenv, "SMTP_DATA_TIMEOUT", &c.DataTimeout, bad)
	if v := strings.TrimSpace(getenv("SMTP_COMMIT_LINGER")); v == "0" {
		c.CommitLinger = -1
	} else {
		readDuration(getenv, "SMTP_COMMIT_LINGER", &c.CommitLinger, bad)
	}
	readDuration(getenv, "SMTP_WRITE_TIMEOUT", &c.WriteTimeout, bad)
	var committers int64
	readInt(getenv, "SMTP_COMMITTERS", &committers, bad)
	if committers > maxCommitters {
		bad("SMTP_COMMITTERS must be at most %d, got %d", maxCommitters, committers)
	}
	c.Committers = int(committers)
	switch v := strings.TrimSpace(getenv("SMTP_STARTTLS")); v {
	case "", "1":
	case "0":
		c.StartTLS = false
	default:
		bad("SMTP_STARTTLS must be 0 or 1, got %q", v)
	}
	tenants, err := ParseTenants(getenv("SMTP_TENANT_DOMAINS"), strings.TrimSpace(getenv("SMTP_DEFAULT_TENANT")))
	if err != nil {
		problems = append(problems, err)
	}
	c.Tenants = tenants
	c.setDefaults(dataDir)
	return c, errors.Join(append(problems, c.Validate())...)
}

func readInt(getenv func(string) string, name string, dst *int64, bad func(string, ...any)) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		bad("%s must be a positive integer, got %q", name, v)
		return
	}
	*dst = n
}

func readDuration(getenv func(string) string, name string, dst *time.Duration, bad func(string, ...any)) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		bad("%s must be a positive duration such as 5m, got %q", name, v)
		return
	}
	*dst = d
}

// setDefaults fills every unset value with its default; dataDir places the self-signed
// certificate.
func (c *Config) setDefaults(dataDir string) {
	setStr := func(p *string, def string) {
		if *p == "" {
			*p = def
		}
	}
	setStr(&c.Addr, DefaultAddr)
	if c.Hostname == "" {
		c.Hostname, _ = os.Hostname()
		setStr(&c.Hostname, "localhost")
	}
	if c.CertFile == "" && c.KeyFile == "" && dataDir != "" {
		c.CertFile, c.KeyFile = filepath.Join(dataDir, "tls", defaultCertName), filepath.Join(dataDir, "tls", keyName)
	}
	setNum(&c.MaxMessageBytes, DefaultMaxMessageBytes)
	setNum(&c.MaxInFlightBytes, DefaultMaxInFlightBytes)
	setNum(&c.MaxRecipients, DefaultMaxRecipients)
	setNum(&c.MaxConnections, DefaultMaxConnections)
	setNum(&c.MaxConnectionsPerIP, DefaultMaxConnectionsIP)
	setNum(&c.IdleTimeout, DefaultIdleTimeout)
	setNum(&c.DataTimeout, DefaultDataTimeout)
	setNum(&c.WriteTimeout, DefaultWriteTimeout)
	setNum(&c.MaxBatchMessages, DefaultMaxBatchMessages)
	setNum(&c.MaxBatchBytes, DefaultMaxBatchBytes)
	if c.CommitLinger == 0 {
		c.CommitLinger = DefaultCommitLinger
	}
	if c.Tenants.byDomain == nil && c.Tenants.Default == "" {
		c.Tenants.Default, c.Tenants.defaulted = defaultTenant, true
	}
}

func setNum[T int | int64 | time.Duration](p *T, def T) {
	if *p <= 0 {
		*p = def
	}
}

// Validate checks the configuration and joins every problem it finds.
func (c Config) Validate() error {
	var problems []error
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("SMTP_ADDR must be host:port, got %q", c.Addr)
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		bad("SMTP_TLS_CERT_FILE and SMTP_TLS_KEY_FILE must be set together")
	}
	if c.StartTLS && c.CertFile == "" {
		bad("STARTTLS needs SMTP_TLS_CERT_FILE and SMTP_TLS_KEY_FILE, or a data dir for a self-signed certificate")
	}
	if c.MaxConnectionsPerIP > c.MaxConnections {
		bad("SMTP_MAX_CONNECTIONS_PER_IP (%d) is above SMTP_MAX_CONNECTIONS (%d)", c.MaxConnectionsPerIP, c.MaxConnections)
	}
	if c.MaxInFlightBytes < c.MaxMessageBytes {
		bad("SMTP_MAX_INFLIGHT_BYTES (%d) is below SMTP_MAX_MESSAGE_BYTES (%d): the largest message could never be received", c.MaxInFlightBytes, c.MaxMessageBytes)
	}
	return errors.Join(problems...)
}
