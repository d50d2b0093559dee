package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
)

// erasureRoutes are the ten routes of the erasure API, with {id} for a request id, the
// method and the body of each.
var erasureRoutes = []struct{ method, path, body string }{
	{"GET", gdprPath, ""},
	{"POST", gdprPath, `{"email_addresses":["someone@people.test"]}`},
	{"GET", gdprPath + "/{id}", ""},
	{"POST", gdprPath + "/{id}/assess", ""},
	{"POST", gdprPath + "/{id}/approve", ""},
	{"POST", gdprPath + "/{id}/reject", `{"reason":"not verified"}`},
	{"POST", gdprPath + "/{id}/execute", ""},
	{"GET", gdprPath + "/{id}/certificate", ""},
	{"GET", gdprPath + "/{id}/certificate/pdf", ""},
	{"GET", gdprPath + "/{id}/certificate/bundle", ""},
	{"GET", gdprPath + "/{id}/audit", ""},
}

// TestErasureRoles checks docs/api.md's roles on every erasure route: no credentials 401, plain
// users and customer administrators 403 (before anything else, and changing nothing);
// auditors and the global administrator get past the role check.
func TestErasureRoles(t *testing.T) {
	t.Parallel()
	f := newGDPRFixture(t, database.SQLite)
	v := f.inState(erasure.StatusCompleted, 1)
	before := f.head()
	callers := map[string]func(*http.Request){"no credentials": nil, "user": as(plainUser), "customer admin": as(customerAdmin)}
	for _, route := range erasureRoutes {
		path := strings.ReplaceAll(route.path, "{id}", v.RequestID)
		for name, prepare := range callers {
			resp, raw := f.do(path, prepare, withBody(route.method, route.body))
			want := http.StatusForbidden
			if prepare == nil {
				want = http.StatusUnauthorized
			}
			require.Equal(t, want, resp.StatusCode, "%s %s as %s: %s", route.method, path, name, raw)
			checkStatusBody(t, resp, raw)
		}
		for _, user := range []string{auditorUser, adminUser} {
			resp, raw := f.do(path, as(user), withBody(route.method, route.body))
			assert.NotContains(t, []int{401, 403, 404}, resp.StatusCode, "%s %s as %s: %s", route.method, path, user, raw)
		}
	}
	assert.Equal(t, before+2, f.head(), "the auditor's and the admin's creates are the only appends")
}

// Users of the two customers of the tenancy test.
const (
	gdprAuditorA = "dpo-a"
	gdprAuditorB = "dpo-b"
)

// TestErasureTenants checks that an auditor sees and acts on their own tenant's requests
// only (another tenant's request is 404 on every route, and unchanged), while the global
// administrator sees every tenant and creates in the tenant it names.
func TestErasureTenants(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newGDPRFixtureWith(t, d, func(o *handlers.Options) { o.Multitenancy = true })
		f.addUser(gdprAuditorA, identity.RoleAuditor, "dpo@a.test", "a.test")
		f.addUser(gdprAuditorB, identity.RoleAuditor, "dpo@b.test", "b.test")
		a := f.create(gdprAuditorA, "subject@a.test")
		f.drain()
		a = f.request(gdprAuditorA, a.RequestID)
		require.Equal(t, erasure.StatusPendingApproval, a.Status)
		before := f.head()
		for _, route := range erasureRoutes[2:] {
			path := strings.ReplaceAll(route.path, "{id}", a.RequestID)
			resp, raw := f.do(path, as(gdprAuditorB), withBody(route.method, route.body))
			require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %s as the other tenant: %s", route.method, path, raw)
			assert.Equal(t, "not_found", decodeError(t, raw).Error.Code)
		}
		assert.Equal(t, before, f.head(), "the other tenant changed nothing")
		assert.Equal(t, a, f.request(gdprAuditorA, a.RequestID))
		assert.Empty(t, f.listRequests(gdprAuditorB, "").Requests)
		assert.Equal(t, []string{a.RequestID}, requestIDs(f.listRequests(gdprAuditorA, "")))

		resp, raw := f.postAs(adminUser, gdprPath+"?tenant=b.test", `{"email_addresses":["subject@b.test"]}`)
		require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", raw)
		var b requestJSON
		decode(t, raw, &b)
		assert.Equal(t, []string{b.RequestID}, requestIDs(f.listRequests(gdprAuditorB, "")))
		assert.Equal(t, []string{b.RequestID, a.RequestID}, requestIDs(f.listRequests(adminUser, "")), "the admin sees every tenant")
		assert.Equal(t, []string{a.RequestID}, requestIDs(f.listRequests(adminUser, "?tenant=a.test")))
		resp, raw = f.postAs(gdprAuditorA, gdprPath+"?tenant=b.test", `{"email_addresses":["x@b.test"]}`)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "an auditor creates in another tenant: %s", raw)
		f.actOK(adminUser, a.RequestID, "approve", "", http.StatusOK)
	})
}
