// Package smarthost delivers archived messages to a mailbox through an SMTP relay (the
// spec's smarthost): the original bytes, unchanged, to one recipient. It is an adapter:
// app calls it through app.Smarthost, and cmd/mailledger builds it from SMARTHOST_*.
package smarthost

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/smtp"
	"os"
	"strings"
	"time"
)

// TLS modes of the connection to the smarthost (SMARTHOST_STARTTLS).
const (
	// Opportunistic uses STARTTLS when the smarthost offers it. The certificate is checked
	// only when credentials are sent: mail to an unverified relay is no worse off than mail
	// in the clear, a password is.
	Opportunistic = "opportunistic"
	// Required refuses a smarthost that does not offer STARTTLS or whose certificate does
	// not verify.
	Required = "required"
	// Off never uses TLS (and never sends credentials, but to a loopback address).
	Off = "off"
)

// DefaultTimeout bounds a whole delivery: connect, TLS, every command and the data.
const DefaultTimeout = time.Minute

// Config configures a Client. Addr is required; the zero value of the rest takes the
// defaults (opportunistic TLS, the null sender, DefaultTimeout).
type Config struct {
	Addr     string // host:port of the relay (SMARTHOST_ADDR)
	StartTLS string // Opportunistic (default), Required or Off (SMARTHOST_STARTTLS)
	// RootCAs verify the smarthost's certificate; nil means the system's (SMARTHOST_CA_FILE).
	RootCAs  *x509.CertPool
	Username string // AUTH PLAIN user (SMARTHOST_USER); empty: no AUTH
	Password string // SMARTHOST_PASSWORD; never logged
	// From is the envelope sender (SMARTHOST_FROM); empty means the null sender <>, so a
	// restored message never bounces back to its original sender.
	From    string
	Timeout time.Duration // of one delivery (SMARTHOST_TIMEOUT)
	Helo    string        // the name in EHLO; the host name when empty
}

// ErrConfig marks an invalid Config.
var ErrConfig = errors.New("smarthost configuration")

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var problems []error
	if _, port, err := net.SplitHostPort(c.Addr); err != nil || port == "" {
		problems = append(problems, fmt.Errorf("%w: SMARTHOST_ADDR %q must be host:port", ErrConfig, c.Addr))
	}
	switch c.StartTLS {
	case "", Opportunistic, Required, Off:
	default:
		problems = append(problems, fmt.Errorf("%w: SMARTHOST_STARTTLS must be %s, %s or %s, got %q", ErrConfig, Opportunistic, Required, Off, c.StartTLS))
	}
	if (c.Username == "") != (c.Password == "") {
		problems = append(problems, fmt.Errorf("%w: SMARTHOST_USER and SMARTHOST_PASSWORD go together", ErrConfig))
	}
	if strings.ContainsAny(c.From, "<>\r\n \t") {
		problems = append(problems, fmt.Errorf("%w: SMARTHOST_FROM %q must be a bare address", ErrConfig, c.From))
	}
	if c.Timeout < 0 {
		problems = append(problems, fmt.Errorf("%w: SMARTHOST_TIMEOUT must not be negative", ErrConfig))
	}
	return errors.Join(problems...)
}

func (c *Config) setDefaults() {
	if c.StartTLS == "" {
		c.StartTLS = Opportunistic
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Helo == "" {
		c.Helo, _ = os.Hostname()
	}
}

// LoadCAs reads a PEM file of certificates for Config.RootCAs.
func LoadCAs(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: SMARTHOST_CA_FILE: %w", ErrConfig, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: SMARTHOST_CA_FILE %s holds no PEM certificate", ErrConfig, path)
	}
	return pool, nil
}

// Client delivers messages through one smarthost.
type Client struct {
	cfg Config
}

// New returns a Client for cfg, validated.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Client{cfg: cfg}, nil
}

// String names the smarthost (for the ledger and the log): its address, no secret.
func (c *Client) String() string { return c.cfg.Addr }

// ErrRefused is a delivery the smarthost answered with an error, or could not take.
var ErrRefused = errors.New("smarthost did not take the message")

// Send delivers msg, an RFC 5322 message, to the mailbox to. It returns once the smarthost
// has answered the data with 2xx; any failure wraps ErrRefused with the smarthost's answer
// or the network error.
func (c *Client) Send(ctx context.Context, to string, msg io.Reader) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", c.cfg.Addr)
	if err != nil {
		return fmt.Errorf("%w: connect to %s: %w", ErrRefused, c.cfg.Addr, err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) }) // a cancel ends it at once
	defer stop()
	if err := c.deliver(conn, to, msg); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRefused, c.cfg.Addr, err)
	}
	return nil
}

// deliver speaks SMTP over conn: EHLO, STARTTLS, AUTH, one transaction, QUIT.
func (c *Client) deliver(conn net.Conn, to string, msg io.Reader) error {
	host, _, _ := net.SplitHostPort(c.cfg.Addr)
	sc, err := smtp.NewClient(conn, host)
	if err != nil {
		return err
	}
	defer sc.Close()
	if err := sc.Hello(c.cfg.Helo); err != nil {
		return err
	}
	if err := c.startTLS(sc, host); err != nil {
		return err
	}
	if c.cfg.Username != "" {
		if err := sc.Auth(smtp.PlainAuth("", c.cfg.Username, c.cfg.Password, host)); err != nil {
			return fmt.Errorf("auth: %w", err)
		}
	}
	if err := sc.Mail(c.cfg.From); err != nil {
		return err
	}
	if err := sc.Rcpt(to); err != nil {
		return err
	}
	w, err := sc.Data()
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, msg); err != nil {
		// No final dot: the connection closes mid-data and the relay drops the message,
		// where ending the data would deliver what was read so far.
		return fmt.Errorf("send the message: %w", err)
	}
	if err := w.Close(); err != nil {
		return err
	}
	return sc.Quit()
}

// startTLS upgrades the connection as the mode says. Opportunistic TLS skips the
// certificate check unless credentials follow (RFC 7435: encryption without
// authentication beats none).
func (c *Client) startTLS(sc *smtp.Client, host string) error {
	if c.cfg.StartTLS == Off {
		return nil
	}
	offered, _ := sc.Extension("STARTTLS")
	if !offered {
		if c.cfg.StartTLS == Required {
			return errors.New("the smarthost does not offer STARTTLS (SMARTHOST_STARTTLS=required)")
		}
		return nil
	}
	verify := c.cfg.StartTLS == Required || c.cfg.Username != ""
	cfg := &tls.Config{ServerName: host, RootCAs: c.cfg.RootCAs, MinVersion: tls.VersionTLS12, InsecureSkipVerify: !verify} //nolint:gosec // opportunistic TLS, see above
	if err := sc.StartTLS(cfg); err != nil {
		return fmt.Errorf("starttls: %w", err)
	}
	return nil
}
