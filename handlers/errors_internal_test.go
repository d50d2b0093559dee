package handlers

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/identity"
)

func TestClassifyMapsErrorsToTheContract(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("%w: at 3", eventstore.ErrNotFound), 404, "not_found"},
		{fmt.Errorf("hold LH-1: %w", app.ErrNotFound), 404, "not_found"},
		{fmt.Errorf("append: %w", eventstore.ErrConcurrentModification), 409, "conflict"},
		{ErrInvalidTransition, 409, "invalid_transition"},
		{&ValidationError{Fields: map[string]string{"a": "bad"}}, 400, "validation_failed"},
		{fmt.Errorf("%w: eof", ErrInvalidJSON), 400, "invalid_json"},
		{ErrUnauthenticated, 401, "unauthenticated"},
		{ErrForbidden, 403, "forbidden"},
		{&http.MaxBytesError{Limit: MaxBodyBytes}, 413, "payload_too_large"},
		{fmt.Errorf("ping: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")}), 503, "database_unavailable"},
		{ErrDatabaseUnavailable, 503, "database_unavailable"},
		{errors.New("pq: relation secret_table does not exist"), 500, "internal"},
		{fmt.Errorf("login: %w", identity.ErrBadCredentials), 401, "unauthenticated"},
		{ErrTooManyRequests, 429, "too_many_requests"},
		{fmt.Errorf("message 7: %w", archive.ErrNotFound), 404, "not_found"},
		{fmt.Errorf("message 7: %w: tag mismatch", archive.ErrIntegrity), 500, "integrity_error"},
		{fmt.Errorf("message 7: %w", archive.ErrUnknownKey), 500, "integrity_error"},
		{&domain.ValidationError{Fields: map[string]string{"reason": "is required"}}, 400, "validation_failed"},
		{domain.ErrValidation, 400, "validation_failed"},
		{&domain.TransitionError{Subject: "hold LH-1", State: "released", Action: "release", Need: "active"}, 409, "invalid_transition"},
		{fmt.Errorf("x: %w", domain.ErrInvalidTransition), 409, "invalid_transition"},
		{ErrArchiveUnavailable, 503, "archive_unavailable"},
		{fmt.Errorf("%w: no memory for the message within 10s", app.ErrBusy), 503, "busy"},
	}
	for _, tc := range cases {
		e := classify(tc.err)
		assert.Equal(t, tc.status, e.status, "%v", tc.err)
		assert.Equal(t, tc.code, e.Code, "%v", tc.err)
	}
	assert.NotContains(t, classify(errors.New("secret_table")).Message, "secret_table", "internal errors are not shown")
	assert.NotContains(t, classify(fmt.Errorf("%w: subject secret", archive.ErrIntegrity)).Message, "secret", "nor integrity details")
}

func TestDomainErrorDetails(t *testing.T) {
	t.Parallel()
	ve := &domain.ValidationError{}
	ve.Add("value", "must be a domain name")
	e := classify(fmt.Errorf("place: %w", ve))
	assert.Equal(t, map[string]any{"fields": map[string]string{"value": "must be a domain name"}}, e.Details)
	assert.Equal(t, map[string]any{"fields": map[string]string{}}, classify(domain.ErrValidation).Details, "fields is {} when none are named")
	te := &domain.TransitionError{Subject: "hold LH-1", State: "released", Action: "release", Need: "active"}
	e = classify(fmt.Errorf("release: %w", te))
	assert.Equal(t, "hold LH-1 is released; release needs active", e.Message)
	assert.Equal(t, map[string]any{"status": "released", "action": "release"}, e.Details)
}

func TestValidationErrorDetails(t *testing.T) {
	t.Parallel()
	var ve ValidationError
	require.NoError(t, ve.err())
	ve.add("size", "must be an integer")
	ve.add("size", "second problem is dropped")
	ve.add("position", "is required")
	e := classify(ve.err())
	assert.Equal(t, map[string]any{"fields": map[string]string{"size": "must be an integer", "position": "is required"}}, e.Details)
	assert.Equal(t, "validation failed: position: is required; size: must be an integer", ve.Error())
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	type body struct {
		Name string `json:"name"`
	}
	cases := []struct {
		in   string
		code string
	}{
		{`{"name":"x"}`, ""},
		{` {"name":"x"}  `, ""},
		{`{"name":`, "invalid_json"},
		{`{"name":"x","extra":1}`, "invalid_json"},
		{`{"name":"x"}{"name":"y"}`, "invalid_json"},
		{`[]`, "invalid_json"},
		{`{"name":"` + strings.Repeat("x", MaxBodyBytes) + `"}`, "payload_too_large"},
	}
	for _, tc := range cases {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.in))
		req.Body = http.MaxBytesReader(rec, req.Body, MaxBodyBytes)
		var b body
		err := decodeJSON(req, &b)
		if tc.code == "" {
			require.NoError(t, err, tc.in)
			assert.Equal(t, "x", b.Name)
			continue
		}
		require.Error(t, err, tc.in)
		assert.Equal(t, tc.code, classify(err).Code, "%.40s", tc.in)
	}
}

func TestWriteJSONErrorShape(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	writeError(rec, req, nil, ErrUnauthenticated)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Equal(t, `Basic realm="mailledger"`, rec.Header().Get("WWW-Authenticate"))
	assert.JSONEq(t, `{"error":{"code":"unauthenticated","message":"authentication required","details":null}}`, rec.Body.String())
}
