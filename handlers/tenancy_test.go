package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
)

// Users of two customers, a.test and b.test, in multi-tenant mode.
const (
	auditorA = "aud-a"
	auditorB = "aud-b"
	userA    = "user-a"
)

func newTenantsFixture(t *testing.T, d database.Dialect) (*fixture, int64, int64) {
	f := newDetachedFixture(t, d, func(o *handlers.Options) { o.Multitenancy = true })
	f.addUser(adminUser, identity.RoleAdmin, "", identity.LocalDomain)
	f.addUser(auditorA, identity.RoleAuditor, "audit@a.test", "a.test")
	f.addUser(auditorB, identity.RoleAuditor, "audit@b.test", "b.test")
	f.addUser(userA, identity.RoleUser, "u@a.test", "a.test")
	f.attach()
	mailA := f.archiveMail("a.test", archivetest.Message("x@a.test", []string{"u@a.test"}, nil, "alpha plans", "for a", day))
	mailB := f.archiveMail("b.test", archivetest.Message("y@b.test", []string{"u@a.test"}, nil, "beta plans", "for b", day))
	return f, mailA[0], mailB[0]
}

func TestTenantsAreIsolated(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f, msgA, msgB := newTenantsFixture(t, d)
		assert.Equal(t, []string{"alpha plans"}, subjects(f.list(auditorA, nil)))
		assert.Equal(t, []string{"beta plans"}, subjects(f.list(auditorB, nil)))
		assert.Equal(t, []string{"alpha plans"}, subjects(f.list(userA, nil)), "a user's address in another tenant's mail does not reach it")
		for _, view := range []string{"", "/raw", "/text"} {
			checkStatus(t, f, auditorB, fmt.Sprintf("/api/v1/messages/%d%s", msgA, view), http.StatusNotFound)
			checkStatus(t, f, auditorA, fmt.Sprintf("/api/v1/messages/%d%s", msgB, view), http.StatusNotFound)
			checkStatus(t, f, userA, fmt.Sprintf("/api/v1/messages/%d%s", msgB, view), http.StatusNotFound)
			checkStatus(t, f, auditorA, fmt.Sprintf("/api/v1/messages/%d%s", msgA, view), http.StatusOK)
		}
		checkStatus(t, f, auditorA, "/api/v1/messages?tenant=b.test", http.StatusForbidden)
		restore := func(user string, id int64, want int) {
			t.Helper()
			resp, raw := f.postAs(user, fmt.Sprintf("/api/v1/messages/%d/restore", id), `{"to":"u@a.test"}`)
			require.Equal(t, want, resp.StatusCode, "%s restores %d: %s", user, id, raw)
		}
		restore(auditorB, msgA, http.StatusNotFound)
		restore(auditorA, msgB, http.StatusNotFound)
		restore(userA, msgB, http.StatusNotFound)
		restore(auditorA, msgA, http.StatusServiceUnavailable) // found; this fixture has no smarthost

		holdA := f.placeHold(auditorA, holdBody)
		checkStatus(t, f, auditorB, holdsPath+"/"+holdA, http.StatusNotFound)
		resp, raw := f.postAs(auditorB, holdsPath+"/"+holdA+"/release", "")
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "another tenant's hold is not found, never forbidden: %s", raw)
		assert.Equal(t, "not_found", decodeError(t, raw).Error.Code)
		assert.Empty(t, f.listHolds(auditorB, ""))
		assert.Len(t, f.listHolds(auditorA, "?status=active"), 1, "the release of another tenant changed nothing")
		checkStatus(t, f, auditorB, holdsPath+"?tenant=a.test", http.StatusForbidden)
	})
}

func TestGlobalAdminSpansTenants(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f, msgA, _ := newTenantsFixture(t, d)
		holdA := f.placeHold(auditorA, holdBody)
		holdDefault := f.placeHold(adminUser, holdBody) // in the tenant "default"
		resp, raw := f.postAs(adminUser, holdsPath+"?tenant=b.test", holdBody)
		require.Equal(t, http.StatusCreated, resp.StatusCode, "body %s", raw)
		var placedB holdJSON
		decode(t, raw, &placedB)

		assert.Len(t, f.listHolds(adminUser, ""), 3, "the global admin sees every tenant's holds")
		assert.Len(t, f.listHolds(adminUser, "?tenant=a.test"), 1)
		assert.Len(t, f.listHolds(auditorB, ""), 1, "the hold placed for b.test is b's")
		checkStatus(t, f, auditorA, holdsPath+"/"+holdDefault, http.StatusNotFound)
		checkStatus(t, f, adminUser, holdsPath+"/"+holdA, http.StatusOK)
		resp, raw = f.postAs(adminUser, holdsPath+"/"+holdA+"/release", "")
		require.Equal(t, http.StatusOK, resp.StatusCode, "the global admin releases any tenant's hold: %s", raw)

		assert.Empty(t, subjects(f.list(adminUser, nil)), `the global admin reads the tenant "default" unless told`)
		assert.Equal(t, []string{"alpha plans"}, subjects(f.list(adminUser, url.Values{"tenant": {"a.test"}})))
		checkStatus(t, f, adminUser, fmt.Sprintf("/api/v1/messages/%d?tenant=a.test", msgA), http.StatusOK)
		checkStatus(t, f, adminUser, fmt.Sprintf("/api/v1/messages/%d?tenant=b.test", msgA), http.StatusNotFound)
	})
}

func checkStatus(t *testing.T, f *fixture, user, path string, want int) {
	t.Helper()
	resp, raw := f.getAs(user, path)
	require.Equal(t, want, resp.StatusCode, "%s %s: %s", user, path, raw)
	checkStatusBody(t, resp, raw)
}
