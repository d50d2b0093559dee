package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/console"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
	"github.com/mailledger/mailledger/internal/testenv"
)

// password is every test user's password.
const password = "correct horse battery staple"

// The users: with MULTITENANCY=1 a user's domain is their tenant.
const (
	adminUser     = "admin"     // global administrator (domain local)
	auditorUser   = "auditor"   // auditor of example.test
	approverUser  = "approver"  // second auditor of example.test (segregation of duties)
	plainUser     = "user"      // plain user with the address user@example.test
	noMailUser    = "nomail"    // plain user without an address
	customerAdmin = "custadmin" // administrator of the customer example.test (no compliance pages)
	otherAuditor  = "other"     // auditor of other.test, another tenant
	userAddress   = "user@example.test"
	tenant        = "example.test"
	otherTenant   = "other.test"
)

var testHash = sync.OnceValue(func() string {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		panic(err)
	}
	return string(h)
})

// clock is the sessions' clock, moved by the tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fixture is the API with the console mounted as serve mounts it, over a fresh database.
type fixture struct {
	t       *testing.T
	env     *testenv.Env
	app     *app.Application
	console *console.Server
	http    *httptest.Server
	clock   *clock
	users   *identity.Users
	drained int64 // the ledger position drain delivered up to
	api     *handlers.Server
	signer  *eventstore.Signer
}

// attach hands a new application to the API and the console, with the fixture's clock
// (which tells overdue requests) and the smarthost relay (nil: no restores).
func (f *fixture) attach(relay app.Smarthost) {
	f.t.Helper()
	exports := app.ExportsConfig{Dir: filepath.Join(f.env.DataDir, "export"), ProgressInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	cfg := app.ApplicationConfig{Archive: f.env.Archive, Multitenancy: true, Erasure: app.ErasureConfig{Clock: f.clock.Now},
		Smarthost: relay, Exports: &exports}
	a, err := app.New(f.env.Store, f.signer, cfg)
	require.NoError(f.t, err)
	f.app = a
	f.api.Attach(a)
	f.console.Attach(a)
}

const idle = 30 * time.Minute

func newFixture(t *testing.T, d database.Dialect) *fixture {
	t.Helper()
	env := testenv.New(t, d)
	signer, _ := testenv.Signer(t, env.Store, "mailledger-test")
	users := identity.NewUsers(env.DB)
	f := &fixture{t: t, env: env, users: users, clock: &clock{now: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)}}
	for _, u := range []identity.User{
		{Username: adminUser, Domain: identity.LocalDomain, Role: identity.RoleAdmin},
		{Username: auditorUser, Email: "auditor@example.test", Domain: tenant, Role: identity.RoleAuditor},
		{Username: approverUser, Email: "approver@example.test", Domain: tenant, Role: identity.RoleAuditor},
		{Username: plainUser, Email: userAddress, Domain: tenant, Role: identity.RoleUser},
		{Username: noMailUser, Domain: tenant, Role: identity.RoleUser},
		{Username: customerAdmin, Domain: tenant, Role: identity.RoleAdmin},
		{Username: otherAuditor, Email: "auditor@other.test", Domain: otherTenant, Role: identity.RoleAuditor},
	} {
		u.PasswordHash = testHash()
		_, err := users.Add(context.Background(), u)
		require.NoError(t, err)
	}
	auth := identity.NewAuthenticator(users)
	limiter := identity.NewFailureLimiter(handlers.MaxLoginFailures, handlers.MaxLoginFailuresPerIP, handlers.LoginFailureWindow)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	var err error
	f.console, err = console.New(console.Options{Auth: auth, Limiter: limiter, IdleTimeout: idle, Logger: logger, Now: f.clock.Now})
	require.NoError(t, err)
	api, err := handlers.New(handlers.Options{Auth: auth, Limiter: limiter, Multitenancy: true, Logger: logger, Console: f.console})
	require.NoError(t, err)
	f.api, f.signer = api, signer
	f.attach(nil)
	f.http = httptest.NewServer(api)
	t.Cleanup(f.http.Close)
	t.Cleanup(func() { _ = f.app.Verification.Wait(context.Background()) }) // before the database goes
	return f
}

// archiveMail stores raw messages in tenant t and returns their ids.
func (f *fixture) archiveMail(t string, raws ...string) []int64 {
	f.t.Helper()
	batch := make([]*archive.Prepared, len(raws))
	for i, raw := range raws {
		p, err := f.env.Archive.Prepare(archive.Incoming{Tenant: t, Raw: []byte(raw), Source: fmt.Sprintf("test-%d", i)})
		require.NoError(f.t, err)
		batch[i] = p
	}
	res, err := f.env.Archive.Commit(context.Background(), batch)
	require.NoError(f.t, err)
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.ID
	}
	return ids
}

// mail is a plain message from sender to rcpt.
func mail(from, to, subject, body string) string {
	return fmt.Sprintf("From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: Tue, 24 Nov 2026 10:00:00 +0000\r\nMessage-ID: <%s@test>\r\n\r\n%s\r\n",
		from, to, subject, strings.ReplaceAll(subject, " ", "-"), body)
}

// browser is one user agent: a cookie jar, redirects not followed.
type browser struct {
	f    *fixture
	c    *http.Client
	csrf string
}

func (f *fixture) browser() *browser {
	jar, err := cookiejar.New(nil)
	require.NoError(f.t, err)
	return &browser{f: f, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// login logs user in with the form and reads the CSRF token from the start page.
func (f *fixture) login(user string) *browser {
	f.t.Helper()
	b := f.browser()
	resp, _ := b.post("/login", url.Values{"username": {user}, "password": {password}})
	require.Equal(f.t, http.StatusSeeOther, resp.StatusCode, "login of %s", user)
	_, body := b.get("/")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	require.NotNil(f.t, m, "no CSRF token on the start page: %s", body)
	b.csrf = m[1]
	return b
}

func (b *browser) get(path string) (*http.Response, string) {
	b.f.t.Helper()
	resp, err := b.c.Get(b.f.http.URL + path)
	require.NoError(b.f.t, err)
	return resp, readBody(b.f.t, resp)
}

// post sends form as is (no CSRF token added).
func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.f.t.Helper()
	resp, err := b.c.PostForm(b.f.http.URL+path, form)
	require.NoError(b.f.t, err)
	return resp, readBody(b.f.t, resp)
}

// submit sends form with the session's CSRF token.
func (b *browser) submit(path string, form url.Values) (*http.Response, string) {
	b.f.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", b.csrf)
	return b.post(path, form)
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(raw)
}

// countEvents counts the ledger's events of type.
func (f *fixture) countEvents(eventType string) int {
	f.t.Helper()
	var n int
	db := f.env.DB
	require.NoError(f.t, db.QueryRow(db.Rebind(`SELECT COUNT(*) FROM events WHERE event_type = ?`), eventType).Scan(&n))
	return n
}

// drain delivers every event appended since the last drain to the erasure assessor and
// executor, in order, as the background would, until the ledger is quiet.
func (f *fixture) drain() {
	f.t.Helper()
	ctx := context.Background()
	for {
		recs, err := f.env.Store.ReadAll(ctx, f.drained, 100)
		require.NoError(f.t, err)
		if len(recs) == 0 {
			return
		}
		for _, rec := range recs {
			require.NoError(f.t, f.app.Erasure.HandleAssessment(ctx, rec), "assessor at %d", rec.Position)
			require.NoError(f.t, f.app.Erasure.HandleExecution(ctx, rec), "executor at %d", rec.Position)
			f.drained = rec.Position
		}
	}
}

// objects are a request and a hold of one tenant, made through the use cases.
type objects struct {
	request, hold string
}

// makeObjects creates a request (assessed, pending approval) and an active hold in t.
func (f *fixture) makeObjects(t string, subject string) objects {
	f.t.Helper()
	ctx := context.Background()
	md := domain.Metadata{Actor: "setup"}
	req, err := f.app.Erasure.Create(ctx, t, app.CreateRequestInput{EmailAddresses: []string{subject}}, md)
	require.NoError(f.t, err)
	hold, err := f.app.LegalHolds.Place(ctx, t, app.PlaceHoldInput{Type: "address", Value: "held-" + subject, Reason: "litigation " + t}, md)
	require.NoError(f.t, err)
	f.drain()
	return objects{request: req.RequestID, hold: hold.ID}
}

// status reads a request's status through the use case.
func (f *fixture) status(t, id string) string {
	f.t.Helper()
	v, err := f.app.Erasure.Get(context.Background(), t, id)
	require.NoError(f.t, err)
	return v.Status
}

// holdStatus reads a hold's status through the use case.
func (f *fixture) holdStatus(t, id string) string {
	f.t.Helper()
	v, err := f.app.LegalHolds.Get(context.Background(), t, id)
	require.NoError(f.t, err)
	return v.Status
}
