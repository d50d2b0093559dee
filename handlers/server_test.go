package handlers_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
)

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	f := newDetachedFixture(t, database.SQLite)
	f.addUser(adminUser, identity.RoleAdmin, "", identity.LocalDomain)

	resp, _ := f.do("/healthz", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "healthz answers while the database is not attached")
	resp, body := f.do("/readyz", nil)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "database_unavailable", decodeError(t, body).Error.Code)
	for _, prepare := range []func(*http.Request){nil, as(adminUser), basic(adminUser, "wrong")} {
		resp, body = f.do("/api/v1/ledger/checkpoint", prepare)
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the API waits for the database")
		assert.Equal(t, "database_unavailable", decodeError(t, body).Error.Code)
	}

	f.attach()
	resp, body = f.do("/readyz", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "body %s", body)
	resp, _ = f.get("/api/v1/ledger/checkpoint")
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, f.db.Close())
	resp, body = f.do("/readyz", nil)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a closed database is not ready")
	assert.Equal(t, "database_unavailable", decodeError(t, body).Error.Code)
	resp, _ = f.do("/healthz", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "healthz only says the process is up")
}

func TestMetricsAreOptIn(t *testing.T) {
	t.Parallel()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metric 1\n")) })
	get := func(api http.Handler, authorization string) *httptest.ResponseRecorder {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "/metrics", nil)
		require.NoError(t, err)
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		return rec
	}
	closed, err := handlers.New(handlers.Options{Auth: identity.NewAuthenticator(nil), Metrics: metrics})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, get(closed, "").Code, "without METRICS_TOKEN the API's address does not serve /metrics")

	const token = "0123456789abcdef-metrics"
	api, err := handlers.New(handlers.Options{Auth: identity.NewAuthenticator(nil), Metrics: metrics,
		HTTP: handlers.HTTPConfig{MetricsToken: token}})
	require.NoError(t, err)
	for _, bad := range []string{"", "Bearer wrong", "Bearer " + token[:10], "Basic " + token} {
		rec := get(api, bad)
		assert.Equal(t, http.StatusUnauthorized, rec.Code, "Authorization %q", bad)
		assert.Equal(t, `Bearer realm="mailledger metrics"`, rec.Header().Get("WWW-Authenticate"))
	}
	rec := get(api, "Bearer "+token)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "metric 1\n", rec.Body.String())

	only := handlers.MetricsHandler(metrics, "")
	assert.Equal(t, http.StatusOK, get(only, "").Code, "METRICS_ADDR without a token serves /metrics to anyone who reaches it")
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "/api/v1/ledger/checkpoint", nil)
	require.NoError(t, err)
	rec = httptest.NewRecorder()
	only.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusNotFound, rec.Code, "the metrics listener serves nothing else")
	guarded := handlers.MetricsHandler(metrics, token)
	assert.Equal(t, http.StatusUnauthorized, get(guarded, "").Code)
	assert.Equal(t, http.StatusOK, get(guarded, "Bearer "+token).Code)
}

func TestOversizedBodyIs413(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	big := strings.Repeat("x", handlers.MaxBodyBytes+1)
	resp, body := f.do("/api/v1/ledger/checkpoint", func(r *http.Request) {
		r.SetBasicAuth(adminUser, adminPass)
		r.Method = http.MethodPost
		r.Body = io.NopCloser(strings.NewReader(big))
		r.ContentLength = int64(len(big))
	})
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "body %s", body)
	assert.Equal(t, "payload_too_large", decodeError(t, body).Error.Code)
}

func TestWrongMethodIs405(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	resp, body := f.do("/api/v1/ledger/checkpoint", func(r *http.Request) {
		r.SetBasicAuth(adminUser, adminPass)
		r.Method = http.MethodDelete
	})
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "body %s", body)
	assert.Equal(t, "method_not_allowed", decodeError(t, body).Error.Code)
}

func TestNewRejectsMissingAuthenticator(t *testing.T) {
	t.Parallel()
	_, err := handlers.New(handlers.Options{})
	assert.Error(t, err)
}
