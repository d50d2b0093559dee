package smtpd

import (
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// busyReply is what a connection over a limit gets before it is closed.
const busyReply = "421 4.7.0 Too many connections, try again later\r\n"

// limitListener accepts at most max connections at once, and perIP from one address;
// a connection over either limit gets busyReply and is closed at once. It tracks the
// connections it gave out, so that drain can end the idle ones.
type limitListener struct {
	net.Listener
	max, perIP int
	onRefused  func()

	mu       sync.Mutex
	byIP     map[string]int
	conns    map[*trackedConn]struct{}
	draining bool
}

func newLimitListener(ln net.Listener, max, perIP int, onRefused func()) *limitListener {
	return &limitListener{Listener: ln, max: max, perIP: perIP, onRefused: onRefused,
		byIP: map[string]int{}, conns: map[*trackedConn]struct{}{}}
}

// Accept returns the next connection within the limits.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if tc := l.admit(c); tc != nil {
			return tc, nil
		}
		l.onRefused()
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write([]byte(busyReply))
		_ = c.Close()
	}
}

// admit counts c in, or returns nil when it is over a limit.
func (l *limitListener) admit(c net.Conn) *trackedConn {
	ip := hostOf(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= l.max || l.byIP[ip] >= l.perIP {
		return nil
	}
	l.byIP[ip]++
	tc := &trackedConn{Conn: c, ip: ip, l: l}
	tc.draining.Store(l.draining)
	l.conns[tc] = struct{}{}
	return tc
}

func (l *limitListener) release(tc *trackedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.conns[tc]; !ok {
		return
	}
	delete(l.conns, tc)
	if l.byIP[tc.ip]--; l.byIP[tc.ip] <= 0 {
		delete(l.byIP, tc.ip)
	}
}

// drain makes every connection end once it is not receiving a message: an idle one at
// once (its read fails as a timeout, go-smtp answers 421 and closes it), one in DATA
// after its reply.
func (l *limitListener) drain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.draining = true
	for tc := range l.conns {
		tc.drain()
	}
}

func hostOf(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// trackedConn is a connection counted by its limitListener until closed. While the
// server drains, its reads fail as timeouts unless a message is being received.
type trackedConn struct {
	net.Conn
	ip       string
	l        *limitListener
	once     sync.Once
	mu       sync.Mutex // orders the changes of draining and inData with the deadline
	draining atomic.Bool
	inData   atomic.Bool
	// While a message is received, each read must come within dataIdle and all of them
	// before dataEnd (unix nanoseconds).
	dataIdle, dataEnd atomic.Int64
}

// Read reads from the connection. While a message is received it moves the read
// deadline first (go-smtp sets one per command line only); while the server drains, a
// read outside a message fails at once.
func (c *trackedConn) Read(p []byte) (int, error) {
	if c.inData.Load() {
		deadline := time.Now().Add(time.Duration(c.dataIdle.Load()))
		if end := time.Unix(0, c.dataEnd.Load()); deadline.After(end) {
			deadline = end
		}
		_ = c.SetReadDeadline(deadline)
	} else if c.draining.Load() {
		return 0, os.ErrDeadlineExceeded
	}
	return c.Conn.Read(p)
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.l.release(c) })
	return c.Conn.Close()
}

// drain ends the connection's wait for a command now, or after the message it is
// receiving.
func (c *trackedConn) drain() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.draining.Store(true)
	if !c.inData.Load() {
		_ = c.SetReadDeadline(time.Now())
	}
}

// beginData marks the start of a message's reception: each read must come within idle,
// all of them within total, and they go on while the server drains.
func (c *trackedConn) beginData(idle, total time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dataIdle.Store(int64(idle))
	c.dataEnd.Store(time.Now().Add(total).UnixNano())
	c.inData.Store(true)
}

// endData marks the end of a message's reception; a draining connection's next read
// then fails at once.
func (c *trackedConn) endData() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inData.Store(false)
	if c.draining.Load() {
		_ = c.SetReadDeadline(time.Now())
	}
}

// trackedOf finds the trackedConn under c (a *tls.Conn after STARTTLS).
func trackedOf(c net.Conn) *trackedConn {
	for {
		switch v := c.(type) {
		case *trackedConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
}
