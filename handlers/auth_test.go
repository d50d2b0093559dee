package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
	"github.com/mailledger/mailledger/internal/smtpsink"
)

// The callers of the auth matrix, in the order of its columns.
var matrixCallers = []struct {
	name    string
	prepare func(*http.Request)
}{
	{"no credentials", nil},
	{"bad password", basic(adminUser, "not the password")},
	{"user", as(plainUser)},
	{"user without address", as(noMailUser)},
	{"auditor", as(auditorUser)},
	{"customer admin", as(customerAdmin)},
	{"admin", as(adminUser)},
}

// matrixIDs are the objects the matrix's routes point at.
type matrixIDs struct {
	mine, other int64  // a message the plain user received, and one they have no part in
	hold        string // an active legal hold
}

// authMatrix lists every /api/v1 route and the status each caller gets (docs/api.md,
// "Authentication and roles"): ledger routes for anybody authenticated; messages for
// everybody, plain users restricted to their own mail; legal holds for the global admin
// and auditors.
var authMatrix = []struct {
	method string
	path   func(f *fixture, ids matrixIDs) string
	body   string
	want   [7]int // per matrixCallers column
}{
	{"GET", fixed("/api/v1/ledger/public-key"), "", [7]int{401, 401, 200, 200, 200, 200, 200}},
	{"GET", fixed("/api/v1/ledger/checkpoint"), "", [7]int{401, 401, 200, 200, 200, 200, 200}},
	{"GET", fixed("/api/v1/ledger/proof?position=1"), "", [7]int{401, 401, 200, 200, 200, 200, 200}},
	{"GET", fixed("/api/v1/ledger/consistency?from=0&to=1"), "", [7]int{401, 401, 200, 200, 200, 200, 200}},
	{"GET", fixed("/api/v1/ledger/events"), "", [7]int{401, 401, 403, 403, 200, 403, 200}},
	{"GET", fixed("/api/v1/admin/retention-rules"), "", [7]int{401, 401, 403, 403, 200, 403, 200}},
	{"GET", fixed("/api/v1/messages"), "", [7]int{401, 401, 200, 200, 200, 200, 200}},
	{"GET", message("mine", ""), "", [7]int{401, 401, 200, 404, 200, 200, 200}},
	{"GET", message("mine", "/raw"), "", [7]int{401, 401, 200, 404, 200, 200, 200}},
	{"GET", message("mine", "/text"), "", [7]int{401, 401, 200, 404, 200, 200, 200}},
	{"GET", message("other", ""), "", [7]int{401, 401, 404, 404, 200, 200, 200}},
	{"GET", message("other", "/raw"), "", [7]int{401, 401, 404, 404, 200, 200, 200}},
	{"GET", message("other", "/text"), "", [7]int{401, 401, 404, 404, 200, 200, 200}},
	{"POST", message("mine", "/restore"), restoreBody, [7]int{401, 401, 200, 404, 200, 200, 200}},
	{"POST", message("other", "/restore"), restoreBody, [7]int{401, 401, 404, 404, 200, 200, 200}},
	{"GET", fixed("/api/v1/admin/legal-holds"), "", [7]int{401, 401, 403, 403, 200, 403, 200}},
	{"POST", fixed("/api/v1/admin/legal-holds"), holdBody, [7]int{401, 401, 403, 403, 201, 403, 201}},
	{"GET", hold(false), "", [7]int{401, 401, 403, 403, 200, 403, 200}},
	{"POST", hold(true), "", [7]int{401, 401, 403, 403, 200, 403, 200}},
	{"GET", fixed("/api/v1/nowhere"), "", [7]int{401, 401, 404, 404, 404, 404, 404}},
}

// restoreBody restores to the plain user's own address, which every role may name.
const restoreBody = `{"to":"` + userAddress + `"}`

const holdBody = `{"type":"address","value":"custodian@example.test","reason":"litigation","matter":"M-1"}`

func fixed(path string) func(*fixture, matrixIDs) string {
	return func(*fixture, matrixIDs) string { return path }
}

func message(which, view string) func(*fixture, matrixIDs) string {
	return func(_ *fixture, ids matrixIDs) string {
		id := ids.other
		if which == "mine" {
			id = ids.mine
		}
		return fmt.Sprintf("/api/v1/messages/%d%s", id, view)
	}
}

// hold points at the active hold, or for a release at a fresh one, so that every caller
// finds it active.
func hold(release bool) func(*fixture, matrixIDs) string {
	return func(f *fixture, ids matrixIDs) string {
		if !release {
			return "/api/v1/admin/legal-holds/" + ids.hold
		}
		return "/api/v1/admin/legal-holds/" + f.placeHold(adminUser, holdBody) + "/release"
	}
}

func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d, func(o *handlers.Options) { o.Limiter = identity.NewFailureLimiter(1000, 1000, time.Minute) })
		f.attachSmarthost(smtpsink.Start(t, smtpsink.Options{}).Addr)
		sent := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		ids := matrixIDs{hold: f.placeHold(adminUser, holdBody)}
		got := f.archiveMail("default",
			archivetest.Message("boss@example.test", []string{userAddress}, nil, "for the user", "hello", sent),
			archivetest.Message("boss@example.test", []string{"someone@example.test"}, nil, "not for the user", "hi", sent))
		ids.mine, ids.other = got[0], got[1]
		for _, route := range authMatrix {
			for i, c := range matrixCallers {
				path := route.path(f, ids)
				resp, body := f.do(path, c.prepare, withBody(route.method, route.body))
				require.Equal(t, route.want[i], resp.StatusCode, "%s %s as %s: body %s", route.method, path, c.name, body)
				checkStatusBody(t, resp, body)
			}
		}
		assert.NotContains(t, f.logs.String(), adminPass, "no password in any log line")
		assert.NotContains(t, f.logs.String(), testHash(), "no hash in any log line")
	})
}

// checkStatusBody checks the shape of an answer: the challenge with a 401, the
// error body of docs/api.md with every error.
func checkStatusBody(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode < 400 {
		return
	}
	e := decodeError(t, body)
	want := map[int]string{401: "unauthenticated", 403: "forbidden", 404: "not_found", 429: "too_many_requests"}[resp.StatusCode]
	assert.Equal(t, want, e.Error.Code)
	if resp.StatusCode == http.StatusUnauthorized {
		assert.Equal(t, `Basic realm="mailledger"`, resp.Header.Get("WWW-Authenticate"))
	}
}

func TestCredentialsAreChecked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	cases := []struct {
		name    string
		prepare func(*http.Request)
		status  int
	}{
		{"no credentials", nil, http.StatusUnauthorized},
		{"unknown user", basic("root", adminPass), http.StatusUnauthorized},
		{"wrong password", basic(adminUser, "wrong"), http.StatusUnauthorized},
		{"password prefix", basic(adminUser, adminPass[:5]), http.StatusUnauthorized},
		{"empty password", basic(adminUser, ""), http.StatusUnauthorized},
		{"not basic", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+adminPass) }, http.StatusUnauthorized},
		{"admin", as(adminUser), http.StatusOK},
	}
	for _, tc := range cases {
		resp, body := f.do("/api/v1/ledger/checkpoint", tc.prepare)
		require.Equal(t, tc.status, resp.StatusCode, "%s: body %s", tc.name, body)
		checkStatusBody(t, resp, body)
	}
	assert.NotContains(t, f.logs.String(), adminPass, "no password in any log line")
	assert.Contains(t, f.logs.String(), `"msg":"login failed"`, "failed logins are logged")
}

func TestWithoutUsersEveryCallIsUnauthenticated(t *testing.T) {
	t.Parallel()
	f := newDetachedFixture(t, database.SQLite)
	f.attach()
	for _, path := range []string{"/api/v1/ledger/checkpoint", "/api/v1/messages", "/api/v1/admin/legal-holds"} {
		for _, creds := range [][2]string{{"", ""}, {adminUser, adminPass}, {"admin", ""}} {
			resp, body := f.do(path, basic(creds[0], creds[1]))
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s as %q", path, creds[0])
			checkStatusBody(t, resp, body)
		}
	}
}

func TestTooManyFailedLoginsAre429(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	const path = "/api/v1/ledger/public-key"
	for i := 0; i < handlers.MaxLoginFailures; i++ {
		resp, _ := f.do(path, basic(auditorUser, fmt.Sprintf("guess %d", i)))
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "failure %d", i+1)
	}
	for _, prepare := range []func(*http.Request){basic(auditorUser, "guess 11"), as(auditorUser)} {
		resp, body := f.do(path, prepare)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "after 10 failures even the right password waits: %s", body)
		checkStatusBody(t, resp, body)
		assert.Equal(t, "60", resp.Header.Get("Retry-After"))
	}
	resp, _ := f.do(path, as(adminUser))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "another user name from the same address is not blocked")
	resp, _ = f.do(path, basic(adminUser, "wrong"))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, _ = f.do(path, nil)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no credentials are not a failed login")
}

func TestRequestIDIsEchoedAndGenerated(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	resp, _ := f.do("/api/v1/ledger/public-key", as(adminUser), func(r *http.Request) { r.Header.Set("X-Request-ID", "req-42") })
	assert.Equal(t, "req-42", resp.Header.Get("X-Request-ID"))
	for _, bad := range []string{"two words", strings.Repeat("x", 129)} {
		resp, _ = f.do("/api/v1/ledger/public-key", as(adminUser), func(r *http.Request) { r.Header.Set("X-Request-ID", bad) })
		generated := resp.Header.Get("X-Request-ID")
		assert.Len(t, generated, 36, "an unusable id is replaced by a UUID, got %q", generated)
	}
	resp, _ = f.do("/api/v1/nowhere", nil)
	assert.NotEmpty(t, resp.Header.Get("X-Request-ID"), "unknown paths get one too")
}

func TestOneIPTryingManyNamesIs429(t *testing.T) {
	t.Parallel()
	// A small per-IP limit and an hour's window: the same rule as the defaults, without
	// 50 password checks that must all fall within one minute (under the race detector on
	// a loaded machine they did not).
	const perIP = 5
	f := newFixture(t, database.SQLite, func(o *handlers.Options) {
		o.Limiter = identity.NewFailureLimiter(handlers.MaxLoginFailures, perIP, time.Hour)
	})
	const path = "/api/v1/ledger/public-key"
	for i := 0; i < perIP; i++ {
		resp, _ := f.do(path, basic(fmt.Sprintf("guess-%d", i), "password"))
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "failure %d", i+1)
	}
	resp, body := f.do(path, basic("yet-another-name", "password"))
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "after %d failures with distinct names: %s", perIP, body)
	checkStatusBody(t, resp, body)
}

func TestRoleAndDisabledStateAreReadOnEveryRequest(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		const path = "/api/v1/admin/legal-holds"
		resp, body := f.getAs(adminUser, path)
		require.Equal(t, http.StatusOK, resp.StatusCode, "body %s", body)

		require.NoError(t, f.users.SetRole(ctx, adminUser, identity.RoleUser))
		resp, body = f.getAs(adminUser, path)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the request after a demotion: body %s", body)

		require.NoError(t, f.users.SetDisabled(ctx, auditorUser, false))
		resp, _ = f.getAs(auditorUser, path)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, f.users.SetDisabled(ctx, auditorUser, true))
		resp, body = f.getAs(auditorUser, path)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the request after disabling: body %s", body)
		checkStatusBody(t, resp, body)
	})
}
