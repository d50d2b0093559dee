package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
	"github.com/mailledger/mailledger/internal/testenv"
	"github.com/mailledger/mailledger/smarthost"
)

// Every test user has the same password.
const adminPass = "correct horse battery staple"

// The users of newFixture (docs/api.md, "Authentication and roles").
const (
	adminUser     = "admin"     // global administrator: domain local
	auditorUser   = "auditor"   // auditor of example.test
	plainUser     = "user"      // plain user with an address
	noMailUser    = "nomail"    // plain user without an address
	customerAdmin = "custadmin" // administrator of the customer example.test
	userAddress   = "user@example.test"
)

// testHash is adminPass hashed at bcrypt's minimum cost, so that tests stay fast.
var testHash = sync.OnceValue(func() string {
	h, err := bcrypt.GenerateFromPassword([]byte(adminPass), bcrypt.MinCost)
	if err != nil {
		panic(err)
	}
	return string(h)
})

// fixture is a Server over a real, migrated database of one dialect and a local archive.
type fixture struct {
	t       *testing.T
	db      *database.DB
	store   *eventstore.Store
	signer  *eventstore.Signer
	arc     *archive.Archive
	dataDir string
	users   *identity.Users
	api     *handlers.Server
	http    *httptest.Server
	logs    *syncBuffer
	appl    *app.Application
	multi   bool
}

// syncBuffer collects the server's log lines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newFixture serves the API on a fresh database of dialect d, with the application
// attached and the users of every role created. configure may change the options.
func newFixture(t *testing.T, d database.Dialect, configure ...func(*handlers.Options)) *fixture {
	t.Helper()
	f := newDetachedFixture(t, d, configure...)
	f.addUser(adminUser, identity.RoleAdmin, "", identity.LocalDomain)
	f.addUser(auditorUser, identity.RoleAuditor, "auditor@example.test", "example.test")
	f.addUser(plainUser, identity.RoleUser, userAddress, "example.test")
	f.addUser(noMailUser, identity.RoleUser, "", "example.test")
	f.addUser(customerAdmin, identity.RoleAdmin, "", "example.test")
	f.attach()
	return f
}

// newDetachedFixture is newFixture without users and without Attach: the state of serve
// while it waits for the database.
func newDetachedFixture(t *testing.T, d database.Dialect, configure ...func(*handlers.Options)) *fixture {
	t.Helper()
	env := testenv.New(t, d)
	f := &fixture{t: t, db: env.DB, store: env.Store, arc: env.Archive, dataDir: env.DataDir, logs: &syncBuffer{}}
	f.signer, _ = testenv.Signer(t, f.store, "mailledger-test")
	f.users = identity.NewUsers(f.db)
	opts := handlers.Options{Auth: identity.NewAuthenticator(f.users), Logger: slog.New(slog.NewJSONHandler(f.logs, nil))}
	for _, c := range configure {
		c(&opts)
	}
	f.multi = opts.Multitenancy
	var err error
	f.api, err = handlers.New(opts)
	require.NoError(t, err)
	f.http = httptest.NewServer(f.api)
	t.Cleanup(f.http.Close)
	return f
}

// attach hands the application, archive included, to the server.
func (f *fixture) attach() {
	f.t.Helper()
	application, err := app.New(f.store, f.signer, app.ApplicationConfig{Archive: f.arc, Multitenancy: f.multi})
	require.NoError(f.t, err)
	f.appl = application
	f.api.Attach(application)
}

// attachSmarthost attaches the application again with restores through the SMTP server
// at addr.
func (f *fixture) attachSmarthost(addr string) {
	f.t.Helper()
	relay, err := smarthost.New(smarthost.Config{Addr: addr})
	require.NoError(f.t, err)
	application, err := app.New(f.store, f.signer, app.ApplicationConfig{Archive: f.arc, Smarthost: relay})
	require.NoError(f.t, err)
	f.api.Attach(application)
}

// addUser creates a user whose password is adminPass.
func (f *fixture) addUser(name string, role identity.Role, email, domain string) {
	f.t.Helper()
	_, err := f.users.Add(context.Background(), identity.User{Username: name, Email: email, Domain: domain,
		PasswordHash: testHash(), Role: role})
	require.NoError(f.t, err)
}

// archiveMail stores raw messages in tenant and returns their ids.
func (f *fixture) archiveMail(tenant string, raws ...[]byte) []int64 {
	f.t.Helper()
	batch := make([]*archive.Prepared, len(raws))
	for i, raw := range raws {
		p, err := f.arc.Prepare(archive.Incoming{Tenant: tenant, Raw: raw, Source: fmt.Sprintf("gen-%d", i)})
		require.NoError(f.t, err)
		batch[i] = p
	}
	res, err := f.arc.Commit(context.Background(), batch)
	require.NoError(f.t, err)
	ids := make([]int64, len(res))
	for i, r := range res {
		require.False(f.t, r.Duplicate, "message %d is a duplicate", i)
		ids[i] = r.ID
	}
	return ids
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

// countEvents counts the ledger's events of type.
func (f *fixture) countEvents(eventType string) int {
	f.t.Helper()
	var n int
	require.NoError(f.t, f.db.QueryRow(f.db.Rebind(`SELECT COUNT(*) FROM events WHERE event_type = ?`), eventType).Scan(&n))
	return n
}

// get requests path with the admin's credentials and returns the response and its body.
func (f *fixture) get(path string) (*http.Response, []byte) {
	f.t.Helper()
	return f.do(path, as(adminUser))
}

// getAs requests path as user.
func (f *fixture) getAs(user, path string) (*http.Response, []byte) {
	f.t.Helper()
	return f.do(path, as(user))
}

// postAs posts body to path as user.
func (f *fixture) postAs(user, path, body string) (*http.Response, []byte) {
	f.t.Helper()
	return f.do(path, as(user), withBody(http.MethodPost, body))
}

// do requests path after letting each prepare change the request.
func (f *fixture) do(path string, prepare ...func(*http.Request)) (*http.Response, []byte) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.http.URL+path, nil)
	require.NoError(f.t, err)
	for _, p := range prepare {
		if p != nil {
			p(req)
		}
	}
	resp, err := f.http.Client().Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return resp, body
}

// as authenticates a request as user, with the common password.
func as(user string) func(*http.Request) { return basic(user, adminPass) }

func basic(user, pass string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(user, pass) }
}

// withBody makes a request a method call with a JSON body.
func withBody(method, body string) func(*http.Request) {
	return func(r *http.Request) {
		r.Method = method
		r.Body = io.NopCloser(strings.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Type", "application/json")
	}
}

// errorBody is the error shape of docs/api.md.
type errorBody struct {
	Error struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

// decodeError parses body as the error shape of docs/api.md, requiring exactly its keys.
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

// decode parses a JSON answer into v.
func decode(t *testing.T, body []byte, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(body, v), "body %s", body)
}
