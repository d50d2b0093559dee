// Package smtpsink is a real SMTP server for tests (github.com/emersion/go-smtp) that
// keeps what it receives: the envelope and the bytes of each message. Tests point a
// client (the smarthost, a restore) at it and check what arrived. Only tests import it.
package smtpsink

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message the sink accepted.
type Message struct {
	From string
	To   []string
	Data []byte
	TLS  bool   // received over STARTTLS
	User string // the AUTH PLAIN user, "" without AUTH
}

// Options shape the sink. The zero value is a plain server that takes everything.
type Options struct {
	TLS          *tls.Config       // offers STARTTLS with it when set
	Users        map[string]string // AUTH PLAIN accepted for these user → password
	RejectRcpt   []string          // recipients answered 550
	RequireAuth  bool              // MAIL without AUTH is answered 530
	InsecureAuth bool              // allow AUTH without TLS
}

// Sink is a running server.
type Sink struct {
	Addr string
	opts Options
	mu   sync.Mutex
	msgs []Message
}

// Start runs a sink on a free loopback port until the test ends.
func Start(t testing.TB, opts Options) *Sink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtpsink: %v", err)
	}
	s := &Sink{Addr: ln.Addr().String(), opts: opts}
	srv := smtp.NewServer(s)
	srv.Domain, srv.TLSConfig, srv.AllowInsecureAuth = "sink.test", opts.TLS, opts.InsecureAuth
	srv.ReadTimeout, srv.WriteTimeout, srv.MaxMessageBytes = 10*time.Second, 10*time.Second, 64<<20
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ln.Close() // Serve may not have registered ln yet, and Close would then miss it
		srv.Close()
		<-done
	})
	return s
}

// Messages returns what the sink has accepted so far.
func (s *Sink) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// NewSession implements smtp.Backend.
func (s *Sink) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{sink: s, conn: c}, nil
}

type session struct {
	sink *Sink
	conn *smtp.Conn
	msg  Message
}

func (x *session) AuthMechanisms() []string {
	if len(x.sink.opts.Users) == 0 {
		return nil
	}
	return []string{sasl.Plain}
}

func (x *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if want, ok := x.sink.opts.Users[user]; !ok || want != pass {
			return errors.New("invalid credentials")
		}
		x.msg.User = user
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if x.sink.opts.RequireAuth && x.msg.User == "" {
		return smtp.ErrAuthRequired
	}
	x.msg.From = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if slices.Contains(x.sink.opts.RejectRcpt, to) {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	x.msg.To = append(x.msg.To, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r); err != nil {
		return err
	}
	_, x.msg.TLS = x.conn.TLSConnectionState()
	m := x.msg
	m.Data = buf.Bytes()
	x.sink.mu.Lock()
	x.sink.msgs = append(x.sink.msgs, m)
	x.sink.mu.Unlock()
	return nil
}

func (x *session) Reset()        { user := x.msg.User; x.msg = Message{User: user} }
func (x *session) Logout() error { return nil }
