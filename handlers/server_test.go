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

func TestMetricsRoute(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metric 1\n")) })
	api, err := handlers.New(handlers.Options{Auth: identity.NewAuthenticator(nil), Metrics: metrics})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "/metrics", nil)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "metric 1\n", rec.Body.String())
}

func TestOversizedBodyIs413(t *testing.T) {
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
	f := newFixture(t, database.SQLite)
	resp, body := f.do("/api/v1/ledger/checkpoint", func(r *http.Request) {
		r.SetBasicAuth(adminUser, adminPass)
		r.Method = http.MethodDelete
	})
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "body %s", body)
	assert.Equal(t, "method_not_allowed", decodeError(t, body).Error.Code)
}

func TestNewRejectsMissingAuthenticator(t *testing.T) {
	_, err := handlers.New(handlers.Options{})
	assert.Error(t, err)
}
