package handlers

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"time"
)

// The time limits of a request (docs/operations.md "HTTP limits"). The http.Server bounds
// the headers (HTTPConfig.ReadHeaderTimeout) and the whole answer (WriteTimeout). A body
// is read only once the caller is authenticated, within BodyTimeout; an answer refused
// before that (401, 429, 503, 413) closes the connection without reading the body, so a
// client trickling a body holds nothing. Downloads write without a total limit, each
// write within DownloadWriteTimeout.

// refuseUnread prepares an answer given without reading the request body: the connection
// closes after it, and the server does not wait for the rest of the body (it would read
// up to 256 KiB of it to keep the connection alive otherwise).
func refuseUnread(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// bodyDeadline admits an authenticated request's body: 413 at once when it declares more
// than MaxBodyBytes, else BodyTimeout to send it.
func (s *Server) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			refuseUnread(w)
			writeError(w, r, s.logger, ErrPayloadTooLarge)
			return
		}
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.http.BodyTimeout))
		next.ServeHTTP(w, r)
	})
}

// streaming gives a download route a deadline per write instead of the server's total
// WriteTimeout: each write must finish within DownloadWriteTimeout.
func (s *Server) streaming(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: s.http.DownloadWriteTimeout}
		dw.extend()
		next.ServeHTTP(dw, r)
	})
}

// deadlineWriter moves the connection's write deadline before every write.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (d *deadlineWriter) extend() { _ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout)) }

func (d *deadlineWriter) Write(p []byte) (int, error) {
	d.extend()
	return d.ResponseWriter.Write(p)
}

// Flush sends buffered data within a fresh deadline.
func (d *deadlineWriter) Flush() {
	d.extend()
	_ = d.rc.Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// bearer admits only requests with `Authorization: Bearer <token>`, compared in constant
// time; others get 401 with a Bearer challenge.
func bearer(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
			refuseUnread(w)
			w.Header().Set("WWW-Authenticate", `Bearer realm="mailledger metrics"`)
			writeJSON(w, http.StatusUnauthorized, map[string]apiError{"error": {
				Code: "unauthenticated", Message: "a bearer token (METRICS_TOKEN) is required"}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// MetricsHandler serves only GET /metrics with metrics, for the listener of METRICS_ADDR;
// with a token, only to `Authorization: Bearer <token>`. Every other path is 404.
func MetricsHandler(metrics http.Handler, token string) http.Handler {
	var h http.Handler = onlyGET(metrics.ServeHTTP)
	if token != "" {
		h = bearer(token, h)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	return mux
}
