package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/projections"
)

const (
	adminUser = "admin"
	adminPass = "correct horse battery staple"
)

// fixture is a Server over a real, migrated database of one dialect.
type fixture struct {
	t      *testing.T
	db     *database.DB
	store  *eventstore.Store
	signer *eventstore.Signer
	api    *handlers.Server
	http   *httptest.Server
}

// newFixture serves the API on a fresh database of dialect d, with the application
// attached and the bootstrap admin configured.
func newFixture(t *testing.T, d database.Dialect) *fixture {
	t.Helper()
	f := newDetachedFixture(t, d, handlers.NewBootstrapAdmin(adminUser, adminPass))
	application, err := app.New(f.store, f.signer)
	require.NoError(t, err)
	f.api.Attach(application)
	return f
}

// newDetachedFixture is newFixture without Attach: the state of serve while it waits for
// the database.
func newDetachedFixture(t *testing.T, d database.Dialect, auth handlers.Authenticator) *fixture {
	t.Helper()
	f := &fixture{t: t, db: dbtest.Open(t, d)}
	var err error
	f.store, err = eventstore.New(f.db, eventstore.Options{Projectors: projections.All()})
	require.NoError(t, err)
	key, err := eventstore.LoadOrCreateKey(t.TempDir(), "mailledger-test")
	require.NoError(t, err)
	f.signer, err = eventstore.NewSigner(f.store, key, "mailledger-test")
	require.NoError(t, err)
	f.api, err = handlers.New(handlers.Options{Auth: auth, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	f.http = httptest.NewServer(f.api)
	t.Cleanup(f.http.Close)
	return f
}

// appendEvents appends n events to one stream, one append each.
func (f *fixture) appendEvents(n int) {
	f.t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		stream := eventstore.Stream{ID: fmt.Sprintf("test-%d", i%3), Type: "test", TenantID: "t1"}
		_, err := f.store.Append(ctx, stream, eventstore.AnyVersion,
			eventstore.NewEvent{Type: "test.happened", SchemaVersion: 1, Payload: map[string]any{"n": i}})
		require.NoError(f.t, err)
	}
}

// sign stores a checkpoint of the current head.
func (f *fixture) sign() *eventstore.Checkpoint {
	f.t.Helper()
	cp, err := f.signer.Sign(context.Background())
	require.NoError(f.t, err)
	return cp
}

// get requests path with the admin's credentials and returns the response and its body.
func (f *fixture) get(path string) (*http.Response, []byte) {
	f.t.Helper()
	return f.do(path, func(r *http.Request) { r.SetBasicAuth(adminUser, adminPass) })
}

// do requests path after letting prepare change the request.
func (f *fixture) do(path string, prepare func(*http.Request)) (*http.Response, []byte) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.http.URL+path, nil)
	require.NoError(f.t, err)
	if prepare != nil {
		prepare(req)
	}
	resp, err := f.http.Client().Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return resp, body
}

// errorBody is the contract's error shape.
type errorBody struct {
	Error struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

// decodeError parses body as the contract's error shape, requiring exactly its keys.
func decodeError(t *testing.T, body []byte) errorBody {
	t.Helper()
	var shape map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &shape), "body %s", body)
	require.Len(t, shape, 1, "body %s", body)
	require.Contains(t, shape, "error")
	for _, k := range []string{"code", "message", "details"} {
		require.Contains(t, shape["error"], k, "body %s", body)
	}
	var e errorBody
	require.NoError(t, json.Unmarshal(body, &e))
	return e
}
