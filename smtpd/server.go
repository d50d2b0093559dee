package smtpd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"

	"github.com/mailledger/mailledger/archive"
)

// maxLineLength bounds a command line and a line of a message (go-smtp's default is
// 2,000 bytes; RFC 5322 allows 998, but Postfix passes lines up to 2,048 and old mail
// has longer ones). A longer line ends the connection with 500: the limit also applies
// to the bytes that follow a BDAT command in the same read, so a BDAT chunk needs a line
// break at least this often.
const maxLineLength = 64 << 10

// Options are the receiver's collaborators besides the archive.
type Options struct {
	Logger     *slog.Logger          // default: slog.Default()
	Registerer prometheus.Registerer // the metrics go here; nil: not exported
	Clock      func() time.Time      // the arrival time; default time.Now
}

// Server is the SMTP receiver. Start it with Start, stop it with Shutdown.
type Server struct {
	cfg     Config
	arc     *archive.Archive
	logger  *slog.Logger
	metrics *metrics
	budget  *semaphore.Weighted
	now     func() time.Time
	tls     *tls.Config
	smtp    *smtp.Server
	ln      *limitListener
	commits *committer
	served  chan error // the result of smtp.Serve

	stopOnce sync.Once
	stopErr  error
}

// New prepares a receiver over arc; it loads the STARTTLS certificate, creating a
// self-signed one on first start when none is configured.
func New(cfg Config, arc *archive.Archive, opts Options) (*Server, error) {
	if arc == nil {
		return nil, errors.New("smtpd: an archive is required")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, arc: arc, logger: opts.Logger, now: opts.Clock, budget: semaphore.NewWeighted(cfg.MaxInFlightBytes)}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	var err error
	if s.metrics, err = newMetrics(opts.Registerer); err != nil {
		return nil, fmt.Errorf("smtp metrics: %w", err)
	}
	if cfg.StartTLS {
		var created bool
		if s.tls, created, err = loadTLS(cfg.CertFile, cfg.KeyFile, cfg.Hostname); err != nil {
			return nil, err
		}
		if created {
			s.logger.Warn("created a self-signed certificate for STARTTLS: clients must not verify it, or set SMTP_TLS_CERT_FILE and SMTP_TLS_KEY_FILE",
				"cert", cfg.CertFile, "key", cfg.KeyFile)
		}
	}
	return s, nil
}

// Start listens on SMTP_ADDR and serves in a goroutine of its own until Shutdown.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on SMTP_ADDR: %w", err)
	}
	s.ln = newLimitListener(ln, s.cfg.MaxConnections, s.cfg.MaxConnectionsPerIP, func() { s.metrics.refuse(refusedConnections) })
	s.commits = newCommitter(s.arc, s.cfg.MaxBatchMessages, s.cfg.MaxBatchBytes, s.cfg.CommitLinger, s.cfg.Committers, s.metrics, s.logger)
	s.smtp = s.newSMTP()
	s.served = make(chan error, 1)
	go func() { s.served <- s.smtp.Serve(s.ln) }()
	s.logger.Info("listening", "addr", ln.Addr().String(), "variable", "SMTP_ADDR", "starttls", s.tls != nil,
		"max_message_bytes", s.cfg.MaxMessageBytes, "tenants", s.cfg.Tenants.String())
	return nil
}

func (s *Server) newSMTP() *smtp.Server {
	srv := smtp.NewServer(smtp.BackendFunc(s.newSession))
	srv.Domain = s.cfg.Hostname
	srv.TLSConfig = s.tls
	srv.MaxMessageBytes = s.cfg.MaxMessageBytes
	srv.MaxRecipients = s.cfg.MaxRecipients
	srv.MaxLineLength = maxLineLength
	srv.ReadTimeout = s.cfg.IdleTimeout
	srv.WriteTimeout = s.cfg.WriteTimeout
	srv.ErrorLog = errorLog{s.logger}
	return srv
}

// Addr is the address the receiver listens on (after Start).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

func (s *Server) newSession(c *smtp.Conn) (smtp.Session, error) {
	tc := trackedOf(c.Conn())
	if tc == nil {
		return nil, errors.New("smtpd: connection not accepted by the receiver's listener")
	}
	s.commits.sessionStarted() // and Logout ends it
	return &session{srv: s, tc: tc, source: fmt.Sprintf("smtp [%s] helo=%s", tc.ip, c.Hostname())}, nil
}

// Shutdown stops accepting, ends the idle connections (421), lets the sessions that are
// receiving a message finish it and its commit, then stops the committer. When ctx ends
// first, the remaining connections are closed and a running commit is cancelled (those
// messages got no 250).
// Later calls return the first call's result.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.smtp == nil {
		return nil
	}
	s.stopOnce.Do(func() { s.stopErr = s.shutdown(ctx) })
	return s.stopErr
}

func (s *Server) shutdown(ctx context.Context) error {
	s.ln.drain()
	err := s.smtp.Shutdown(ctx)
	if err != nil {
		_ = s.smtp.Close()
		s.commits.close(true)
		return fmt.Errorf("smtp receiver: %w", err)
	}
	s.commits.close(false)
	if err := <-s.served; err != nil {
		return fmt.Errorf("smtp receiver: %w", err)
	}
	return nil
}

// errorLog takes go-smtp's log lines (mostly connections that broke off) at debug level.
type errorLog struct{ logger *slog.Logger }

func (l errorLog) Printf(format string, v ...any) {
	l.logger.Debug("smtp connection", "detail", fmt.Sprintf(format, v...))
}

func (l errorLog) Println(v ...any) { l.logger.Debug("smtp connection", "detail", fmt.Sprint(v...)) }
