package handlers

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/identity"
)

// serveLimited serves h with cfg's limits on a real listener and returns its URL.
func serveLimited(t *testing.T, cfg HTTPConfig, h http.Handler) string {
	t.Helper()
	ln, err := cfg.Listen("127.0.0.1:0")
	require.NoError(t, err)
	srv := cfg.Server(h, nil)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// slowWriter writes 8 chunks of 1 KiB, 100 ms apart: 800 ms in all.
func slowWriter(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusOK)
	chunk := make([]byte, 1024)
	for range 8 {
		if _, err := w.Write(chunk); err != nil {
			return
		}
		_ = http.NewResponseController(w).Flush()
		time.Sleep(100 * time.Millisecond) // deliberate: the slow writer's pace, which the deadlines must cut
	}
}

func TestDownloadsHaveAPerWriteDeadline(t *testing.T) {
	cfg := HTTPConfig{WriteTimeout: 300 * time.Millisecond, DownloadWriteTimeout: 300 * time.Millisecond}
	s, err := New(Options{Auth: identity.NewAuthenticator(nil), HTTP: cfg})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/download", s.streaming(http.HandlerFunc(slowWriter)))
	mux.HandleFunc("/normal", slowWriter)
	base := serveLimited(t, cfg, mux)

	body, err := fetch(t, base+"/download")
	require.NoError(t, err, "a download may take longer than HTTP_WRITE_TIMEOUT while each write is quick")
	assert.Len(t, body, 8*1024)
	body, err = fetch(t, base+"/normal")
	assert.True(t, err != nil || len(body) < 8*1024, "a normal answer is cut at HTTP_WRITE_TIMEOUT; got %d bytes", len(body))
}

func TestDownloadToAStalledClientIsCut(t *testing.T) {
	cfg := HTTPConfig{WriteTimeout: time.Hour, DownloadWriteTimeout: 300 * time.Millisecond}
	s, err := New(Options{Auth: identity.NewAuthenticator(nil), HTTP: cfg})
	require.NoError(t, err)
	done := make(chan error, 1)
	base := serveLimited(t, cfg, s.streaming(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := make([]byte, 32<<10)
		for range 4096 { // 128 MiB, far more than the socket buffers hold
			if _, err := w.Write(chunk); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	})))
	conn, err := net.Dial("tcp", base[len("http://"):])
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: test\r\n\r\n") // and never read
	require.NoError(t, err)
	select {
	case err := <-done:
		require.Error(t, err, "the writes to a client that does not read fail")
	case <-time.After(10 * time.Second):
		t.Fatal("a download to a client that stopped reading was not cut within 10 s")
	}
}

func fetch(t *testing.T, url string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
