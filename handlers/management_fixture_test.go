package handlers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
)

// The management API's test customers (MULTITENANCY=1): acme and beta, each with the
// administrator account add_customer creates (user name: the customer_address).
const (
	acmeAdmin   = "admin@acme.test"
	betaAdmin   = "admin@beta.test"
	acmeAuditor = "auditor@acme.test"
	acmeUser    = "user@acme.test"
	acmeHost    = "archive.acme.test"
	betaHost    = "archive.beta.test"
)

// customerBody is an add_customer element as piler's documentation shows it: numbers as
// numbers, the administrator's password as a hash.
func customerBody(id, domain, host string) string {
	return fmt.Sprintf(`{"customer_id":%q,"customer_address":"admin@%s","worker":"worker1","quota":100,`+
		`"retention_days":365,"gui_url":"https://%s","domain":%q,"admin_password":%q,`+
		`"branding_url":"https://%s/brand","support_link":"https://%s/support","enable_purge":0}`,
		id, domain, host, domain, testHash(), domain, domain)
}

// newManagementFixture serves the API in multi-tenant mode with the global admin, the
// customers acme and beta (added through the API), and an auditor and a user of acme.
func newManagementFixture(t *testing.T, d database.Dialect) *fixture {
	t.Helper()
	f := newDetachedFixture(t, d, func(o *handlers.Options) { o.Multitenancy = true })
	f.addUser(adminUser, identity.RoleAdmin, "", identity.LocalDomain)
	f.attach()
	f.mustWrite(adminUser, "add_customer", "["+customerBody("acme", "acme.test", acmeHost)+","+
		customerBody("beta", "beta.test", betaHost)+"]", 2)
	f.addUser(acmeAuditor, identity.RoleAuditor, acmeAuditor, "acme.test")
	f.addUser(acmeUser, identity.RoleUser, acmeUser, "acme.test")
	return f
}

// curl posts body to /api/v1/<call> as `curl -u user:pass -d @data.json` does: with
// Content-Type application/x-www-form-urlencoded, at host when not empty.
func (f *fixture) curl(user, call, body, host string) (*http.Response, []byte) {
	f.t.Helper()
	return f.do("/api/v1/"+call, as(user), func(r *http.Request) {
		r.Method = http.MethodPost
		r.Body = io.NopCloser(strings.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if host != "" {
			r.Host = host
		}
	})
}

// read GETs /api/v1/<call> as user at host (the test server's when empty).
func (f *fixture) read(user, call, host string) (*http.Response, []byte) {
	f.t.Helper()
	return f.do("/api/v1/"+call, as(user), func(r *http.Request) {
		if host != "" {
			r.Host = host
		}
	})
}

// mustWrite posts body to call as user and requires 200 {"result":"ok","count":n}.
func (f *fixture) mustWrite(user, call, body string, n int) {
	f.t.Helper()
	f.mustWriteAt(user, call, body, "", n)
}

// mustWriteAt is mustWrite at host.
func (f *fixture) mustWriteAt(user, call, body, host string, n int) {
	f.t.Helper()
	resp, raw := f.curl(user, call, body, host)
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "%s %s: %s", user, call, raw)
	var got struct {
		Result string `json:"result"`
		Count  int    `json:"count"`
	}
	require.NoError(f.t, json.Unmarshal(raw, &got), "body %s", raw)
	require.Equal(f.t, "ok", got.Result)
	require.Equal(f.t, n, got.Count)
}

// readArray GETs call as user at host and requires 200 with a JSON array.
func (f *fixture) readArray(user, call, host string) []map[string]any {
	f.t.Helper()
	resp, raw := f.read(user, call, host)
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "%s %s: %s", user, call, raw)
	var out []map[string]any
	require.NoError(f.t, json.Unmarshal(raw, &out), "body %s", raw)
	return out
}

// wantError requires the status and error code of a write.
func (f *fixture) wantError(user, call, body, host string, status int, code string) errorBody {
	f.t.Helper()
	resp, raw := f.curl(user, call, body, host)
	require.Equal(f.t, status, resp.StatusCode, "%s %s %s: %s", user, call, body, raw)
	e := decodeError(f.t, raw)
	require.Equal(f.t, code, e.Error.Code, "body %s", raw)
	return e
}

// invalidFields returns the field names of a validation_failed body.
func invalidFields(e errorBody) []string {
	fields, _ := e.Error.Details["fields"].(map[string]any)
	out := make([]string, 0, len(fields))
	for k := range fields {
		out = append(out, k)
	}
	return out
}

// countRows counts the rows of table.
func (f *fixture) countRows(table string) int {
	f.t.Helper()
	var n int
	require.NoError(f.t, f.db.QueryRow(`SELECT COUNT(*) FROM `+table).Scan(&n))
	return n
}

// denied checks that call refuses callers without credentials (401), auditors and
// users (403).
func (f *fixture) denied(t *testing.T, method, call, body string) {
	t.Helper()
	prep := func(r *http.Request) {
		r.Method = method
		if method == http.MethodPost {
			r.Body = io.NopCloser(strings.NewReader(body))
			r.ContentLength = int64(len(body))
		}
	}
	resp, raw := f.do("/api/v1/"+call, prep)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s without credentials: %s", call, raw)
	for _, u := range []string{acmeAuditor, acmeUser} {
		resp, raw = f.do("/api/v1/"+call, as(u), prep)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s as %s: %s", call, u, raw)
		require.Equal(t, "forbidden", decodeError(t, raw).Error.Code)
	}
}
