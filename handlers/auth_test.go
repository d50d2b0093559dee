package handlers_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/handlers"
)

var ledgerRoutes = []string{
	"/api/v1/ledger/public-key",
	"/api/v1/ledger/checkpoint",
	"/api/v1/ledger/proof?position=1",
	"/api/v1/ledger/consistency?from=0&to=1",
}

func TestLedgerRoutesNeedAuthentication(t *testing.T) {
	f := newFixture(t, database.SQLite)
	f.appendEvents(1)
	cases := []struct {
		name    string
		prepare func(*http.Request)
		status  int
	}{
		{"no credentials", nil, http.StatusUnauthorized},
		{"wrong user", basic("root", adminPass), http.StatusUnauthorized},
		{"wrong password", basic(adminUser, "wrong"), http.StatusUnauthorized},
		{"password prefix", basic(adminUser, adminPass[:5]), http.StatusUnauthorized},
		{"empty password", basic(adminUser, ""), http.StatusUnauthorized},
		{"not basic", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+adminPass) }, http.StatusUnauthorized},
		{"bootstrap admin", basic(adminUser, adminPass), http.StatusOK},
	}
	for _, route := range ledgerRoutes {
		for _, tc := range cases {
			resp, body := f.do(route, tc.prepare)
			require.Equal(t, tc.status, resp.StatusCode, "%s, %s: body %s", route, tc.name, body)
			if tc.status == http.StatusUnauthorized {
				checkUnauthenticated(t, resp, body)
			}
		}
	}
}

func TestWithoutBootstrapAdminEveryCallIsUnauthenticated(t *testing.T) {
	f := newDetachedFixture(t, database.SQLite, handlers.NewBootstrapAdmin("", ""))
	for _, route := range ledgerRoutes {
		for _, creds := range [][2]string{{"", ""}, {adminUser, adminPass}, {"admin", ""}} {
			resp, body := f.do(route, basic(creds[0], creds[1]))
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s as %q", route, creds[0])
			checkUnauthenticated(t, resp, body)
		}
	}
}

func TestUnknownAPIPathsAreAuthenticatedFirst(t *testing.T) {
	f := newFixture(t, database.SQLite)
	resp, body := f.do("/api/v1/nowhere", nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	checkUnauthenticated(t, resp, body)
	resp, body = f.get("/api/v1/nowhere")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "not_found", decodeError(t, body).Error.Code)
}

func TestBootstrapAdminPrincipal(t *testing.T) {
	auth := handlers.NewBootstrapAdmin(adminUser, adminPass)
	p, err := auth.Authenticate(context.Background(), adminUser, adminPass)
	require.NoError(t, err)
	assert.Equal(t, handlers.Principal{Username: adminUser, Role: "admin"}, p)
	_, err = auth.Authenticate(context.Background(), adminUser, adminPass+"x")
	assert.ErrorIs(t, err, handlers.ErrUnauthenticated)
	_, err = handlers.NewBootstrapAdmin("", "").Authenticate(context.Background(), "", "")
	assert.ErrorIs(t, err, handlers.ErrUnauthenticated, "no admin configured admits nobody, not the empty user")
}

func basic(user, pass string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(user, pass) }
}

func checkUnauthenticated(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	assert.Equal(t, `Basic realm="mailledger"`, resp.Header.Get("WWW-Authenticate"))
	assert.Equal(t, "unauthenticated", decodeError(t, body).Error.Code)
}
