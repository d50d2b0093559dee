package handlers

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/mailledger/mailledger/domain"
)

// RequestIDHeader carries a request's correlation id: taken from the request when the
// client sends a usable one, generated otherwise, and always echoed in the response. It
// is stored with every ledger event the request causes.
const RequestIDHeader = "X-Request-ID"

// maxRequestID bounds a client-chosen correlation id.
const maxRequestID = 128

// maxUserAgent bounds the user agent stored in the ledger.
const maxUserAgent = 512

type requestIDKey struct{}

// correlate gives every request a correlation id.
func correlate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !usableRequestID(id) {
			id = uuid.Must(uuid.NewV7()).String()
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// usableRequestID accepts 1 to 128 printable ASCII characters without spaces.
func usableRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// requestID returns the correlation id of the request of ctx, "" outside one.
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// metadata says who caused the events of r and from where: the caller's user name, the
// client IP, the user agent and the correlation id.
func metadata(r *http.Request) domain.Metadata {
	ua := r.UserAgent()
	if len(ua) > maxUserAgent {
		ua = strings.ToValidUTF8(ua[:maxUserAgent], "")
	}
	return domain.Metadata{
		Actor: caller(r).Username, ClientIP: clientIP(r), UserAgent: ua, CorrelationID: requestID(r.Context()),
	}
}

// withQuery answers 400 validation_failed, naming each one, to query parameters that
// the route does not take (allowed; none when empty), before next runs.
func withQuery(next http.Handler, allowed ...string) http.Handler {
	takes := "this route takes no query parameters"
	if len(allowed) > 0 {
		takes = "this route takes only " + strings.Join(allowed, ", ")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ve ValidationError
		for name := range r.URL.Query() {
			if !slices.Contains(allowed, name) {
				ve.add(clipName(name), "unknown query parameter; "+takes)
			}
		}
		if err := ve.err(); err != nil {
			writeError(w, r, nil, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// clipName bounds a client-chosen name echoed in an error.
func clipName(name string) string {
	if len(name) > 64 {
		return strings.ToValidUTF8(name[:64], "") + "…"
	}
	return name
}
