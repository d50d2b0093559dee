package handlers

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/netutil"

	"github.com/mailledger/mailledger/app"
)

// Defaults of HTTPConfig (docs/operations.md "HTTP limits").
const (
	DefaultReadHeaderTimeout    = 10 * time.Second
	DefaultBodyTimeout          = 30 * time.Second
	DefaultWriteTimeout         = 60 * time.Second
	DefaultDownloadWriteTimeout = 60 * time.Second
	DefaultIdleTimeout          = 2 * time.Minute
	DefaultMaxConnections       = 1024
)

// HTTPConfig bounds the HTTP server's time and connections and says where /metrics is
// served. Read it with HTTPConfigFromEnv; zero fields take their defaults.
type HTTPConfig struct {
	// ReadHeaderTimeout is HTTP_READ_HEADER_TIMEOUT: the time a client has to send a
	// request's headers.
	ReadHeaderTimeout time.Duration
	// BodyTimeout is HTTP_BODY_TIMEOUT: the time an authenticated client has to send a
	// request body (at most 1 MiB) once its headers are read. Unauthenticated bodies are
	// never read.
	BodyTimeout time.Duration
	// WriteTimeout is HTTP_WRITE_TIMEOUT: the time to write a whole answer, downloads
	// excepted.
	WriteTimeout time.Duration
	// DownloadWriteTimeout is HTTP_DOWNLOAD_WRITE_TIMEOUT: downloads (an export's ZIP, a
	// message's /raw) have no total limit; instead each write of at most 32 KiB must
	// finish within it, so a client that stops reading is cut off.
	DownloadWriteTimeout time.Duration
	// IdleTimeout is HTTP_IDLE_TIMEOUT: how long a kept-alive connection may wait for its
	// next request.
	IdleTimeout time.Duration
	// MaxConnections is HTTP_MAX_CONNECTIONS: connections served at once; further ones
	// wait in the kernel's accept queue until one ends.
	MaxConnections int
	// MetricsAddr is METRICS_ADDR: a listen address serving only /metrics. Unset, no
	// such listener runs.
	MetricsAddr string
	// MetricsToken is METRICS_TOKEN: when set, /metrics is also served on the API's
	// address and needs `Authorization: Bearer <token>` there and on MetricsAddr. It is
	// a secret and never logged.
	MetricsToken string
}

// HTTPConfigFromEnv reads the HTTP_* and METRICS_* variables with getenv, applies the
// defaults and validates them; the error joins every problem, each wrapping
// app.ErrConfig, and never contains the token.
func HTTPConfigFromEnv(getenv func(string) string) (HTTPConfig, error) {
	var problems []error
	c := HTTPConfig{MetricsAddr: strings.TrimSpace(getenv("METRICS_ADDR")), MetricsToken: strings.TrimSpace(getenv("METRICS_TOKEN"))}
	durations := []envDuration{{"HTTP_READ_HEADER_TIMEOUT", &c.ReadHeaderTimeout}, {"HTTP_BODY_TIMEOUT", &c.BodyTimeout},
		{"HTTP_WRITE_TIMEOUT", &c.WriteTimeout}, {"HTTP_DOWNLOAD_WRITE_TIMEOUT", &c.DownloadWriteTimeout},
		{"HTTP_IDLE_TIMEOUT", &c.IdleTimeout}}
	for _, d := range durations {
		if v := strings.TrimSpace(getenv(d.name)); v != "" {
			parsed, err := time.ParseDuration(v)
			if err != nil || parsed <= 0 {
				problems = append(problems, fmt.Errorf("%w: %s must be a positive duration such as 30s, got %q", app.ErrConfig, d.name, v))
				continue
			}
			*d.dst = parsed
		}
	}
	if v := strings.TrimSpace(getenv("HTTP_MAX_CONNECTIONS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			problems = append(problems, fmt.Errorf("%w: HTTP_MAX_CONNECTIONS must be a positive integer, got %q", app.ErrConfig, v))
		}
		c.MaxConnections = n
	}
	c.setDefaults()
	return c, errors.Join(append(problems, c.Validate())...)
}

// envDuration is a duration variable and where it goes.
type envDuration struct {
	name string
	dst  *time.Duration
}

// setDefaults fills every zero limit with its default.
func (c *HTTPConfig) setDefaults() {
	set := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	set(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&c.BodyTimeout, DefaultBodyTimeout)
	set(&c.WriteTimeout, DefaultWriteTimeout)
	set(&c.DownloadWriteTimeout, DefaultDownloadWriteTimeout)
	set(&c.IdleTimeout, DefaultIdleTimeout)
	if c.MaxConnections <= 0 {
		c.MaxConnections = DefaultMaxConnections
	}
}

// Validate checks the metrics settings.
func (c HTTPConfig) Validate() error {
	var problems []error
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			problems = append(problems, fmt.Errorf("%w: METRICS_ADDR %q is not host:port", app.ErrConfig, c.MetricsAddr))
		}
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < 16 {
		problems = append(problems, fmt.Errorf("%w: METRICS_TOKEN must be at least 16 characters", app.ErrConfig))
	}
	return errors.Join(problems...)
}

// LogValue shows the configuration without the metrics token.
func (c HTTPConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("read_header_timeout", c.ReadHeaderTimeout.String()),
		slog.String("body_timeout", c.BodyTimeout.String()),
		slog.String("write_timeout", c.WriteTimeout.String()),
		slog.String("download_write_timeout", c.DownloadWriteTimeout.String()),
		slog.String("idle_timeout", c.IdleTimeout.String()),
		slog.Int("max_connections", c.MaxConnections),
		slog.String("metrics_addr", c.MetricsAddr),
		slog.Bool("metrics_token_set", c.MetricsToken != ""),
	)
}

// Listen listens on addr and serves at most MaxConnections connections at once
// (golang.org/x/net/netutil.LimitListener): a further connection waits to be accepted
// until one of them ends.
func (c HTTPConfig) Listen(addr string) (net.Listener, error) {
	c.setDefaults()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return netutil.LimitListener(ln, c.MaxConnections), nil
}

// Server returns an http.Server for h with the header, write and idle timeouts. The
// body deadline is set per request by the API's middleware (after authentication), and
// downloads replace the write timeout by a deadline per write; ReadTimeout, the whole
// request's, is the header and body timeouts together, a backstop for routes that read
// no body.
func (c HTTPConfig) Server(h http.Handler, logger *slog.Logger) *http.Server {
	c.setDefaults()
	if logger == nil {
		logger = slog.Default()
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout:       c.ReadHeaderTimeout + c.BodyTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}
