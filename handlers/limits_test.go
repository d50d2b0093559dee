package handlers_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/handlers"
)

// limitedFixture is newFixture with the HTTP limits of cfg, served on a real listener
// whose address it returns too.
func limitedFixture(t *testing.T, cfg handlers.HTTPConfig) (*fixture, string) {
	t.Helper()
	f := newFixture(t, database.SQLite, func(o *handlers.Options) { o.HTTP = cfg })
	return f, listen(t, f, cfg)
}

// listen serves f's API with cfg's limits on a real listener and returns its address.
func listen(t *testing.T, f *fixture, cfg handlers.HTTPConfig) string {
	t.Helper()
	ln, err := cfg.Listen("127.0.0.1:0")
	require.NoError(t, err)
	srv := cfg.Server(f.api, nil)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// rawConn is a client connection that writes requests by hand.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dial(t *testing.T, addr string) *rawConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return &rawConn{t: t, conn: conn, r: bufio.NewReader(conn)}
}

func (c *rawConn) send(s string) error {
	_ = c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := io.WriteString(c.conn, s)
	return err
}

// trickle sends one chunk of one byte every interval until stop closes or a write fails.
func (c *rawConn) trickle(interval time.Duration, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(interval):
		}
		if c.send("1\r\n \r\n") != nil {
			return
		}
	}
}

// response reads one answer, waiting at most within.
func (c *rawConn) response(within time.Duration) (*http.Response, error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(within))
	resp, err := http.ReadResponse(c.r, nil)
	if err == nil {
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// closedWithin reports whether the server closes the connection within d.
func (c *rawConn) closedWithin(d time.Duration) bool {
	_ = c.conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c.r)
	return err == nil || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "reset")
}

func basicHeader(user, pass string) string {
	return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)) + "\r\n"
}

func chunkedPost(path, extraHeaders string) string {
	return "POST " + path + " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n" +
		extraHeaders + "\r\n"
}

func TestTricklingBodyIsCut(t *testing.T) {
	f, addr := limitedFixture(t, handlers.HTTPConfig{BodyTimeout: 300 * time.Millisecond})
	c := dial(t, addr)
	stop := make(chan struct{})
	defer close(stop)
	require.NoError(t, c.send(chunkedPost("/api/v1/admin/legal-holds", basicHeader(adminUser, adminPass))+"1\r\n{\r\n"))
	go c.trickle(50*time.Millisecond, stop)
	started := time.Now()
	resp, err := c.response(3 * time.Second)
	require.NoError(t, err, "a body trickled past HTTP_BODY_TIMEOUT is answered")
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Less(t, time.Since(started), 2*time.Second, "cut after the body timeout")
	assert.True(t, c.closedWithin(2*time.Second), "the connection is closed")
	assert.Equal(t, 0, f.countEvents("legalhold.placed"))
}

func TestUnauthenticatedBodyIsNotRead(t *testing.T) {
	_, addr := limitedFixture(t, handlers.HTTPConfig{BodyTimeout: time.Minute})
	for name, headers := range map[string]string{
		"no credentials":    "",
		"wrong password":    basicHeader(adminUser, "wrong"),
		"unknown user name": basicHeader("mallory", "x"),
	} {
		c := dial(t, addr)
		stop := make(chan struct{})
		require.NoError(t, c.send(chunkedPost("/api/v1/admin/legal-holds", headers)))
		go c.trickle(20*time.Millisecond, stop)
		// The body would take a minute (BodyTimeout); the 401 needs one password check,
		// seconds at most on a loaded machine under -race.
		resp, err := c.response(15 * time.Second)
		require.NoError(t, err, "%s: the 401 comes before the body ends", name)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
		assert.True(t, resp.Close, "%s: the answer says Connection: close", name)
		assert.True(t, c.closedWithin(15*time.Second), "%s: the connection is closed", name)
		close(stop)
	}
	c := dial(t, addr)
	require.NoError(t, c.send("POST /api/v1/admin/legal-holds HTTP/1.1\r\nHost: test\r\nContent-Length: 1073741824\r\n\r\n{"))
	resp, err := c.response(2 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a stranger's huge body is 401, not 413")
}

func TestConnectionCapHolds(t *testing.T) {
	_, addr := limitedFixture(t, handlers.HTTPConfig{MaxConnections: 2, ReadHeaderTimeout: time.Minute})
	held := []*rawConn{dial(t, addr), dial(t, addr)}
	for _, c := range held {
		require.NoError(t, c.send("GET /healthz HTTP/1.1\r\nHost: test\r\n")) // headers never end
	}
	third := dial(t, addr)
	require.NoError(t, third.send("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n"))
	_, err := third.response(500 * time.Millisecond)
	require.Error(t, err, "the third connection waits while two are served")
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "got %v; want a timeout", err)
	require.NoError(t, held[0].conn.Close())
	resp, err := third.response(5 * time.Second)
	require.NoError(t, err, "the third connection is served once one ends")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestRequestLogCarriesIDAndUser(t *testing.T) {
	logs := &captured{}
	f := newFixture(t, database.SQLite, func(o *handlers.Options) { o.Logger = slog.New(logs) })
	f.do("/api/v1/ledger/public-key", as(auditorUser), func(r *http.Request) { r.Header.Set("X-Request-ID", "req-77") })
	f.do("/api/v1/ledger/public-key", nil)

	lines := logs.named("http request")
	require.Len(t, lines, 2)
	assert.Equal(t, "req-77", lines[0]["request_id"])
	assert.Equal(t, auditorUser, lines[0]["user"])
	assert.Equal(t, int64(200), lines[0]["status"])
	assert.Len(t, lines[1]["request_id"], 36, "a generated request id is logged")
	assert.Equal(t, "", lines[1]["user"], "no user for an unauthenticated request")
	assert.Equal(t, int64(401), lines[1]["status"])
}

// captured is a slog.Handler that keeps every record's attributes.
type captured struct {
	mu      sync.Mutex
	records []map[string]any
}

func (h *captured) Enabled(context.Context, slog.Level) bool { return true }
func (h *captured) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *captured) WithGroup(string) slog.Handler            { return h }

func (h *captured) Handle(_ context.Context, r slog.Record) error {
	m := map[string]any{"msg": r.Message}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.Any()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, m)
	return nil
}

func (h *captured) named(msg string) []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]any
	for _, r := range h.records {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}
