package console_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestAdminCustomerAdminOwnCustomerOnly: example.test's administrator sees and changes
// only example.test's objects: the lists show no other customer's, another customer's
// object is 404 whatever the page or the method, and stays as it was.
func TestAdminCustomerAdminOwnCustomerOnly(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		o := f.makeAdminObjects()
		ca := f.login(customerAdmin)

		_, page := ca.get("/admin/customers")
		assert.Contains(t, page, tenant)
		assert.NotContains(t, page, otherTenant)
		_, page = ca.get("/admin/users")
		assert.Contains(t, page, userAddress)
		assert.NotContains(t, page, "auditor@other.test")
		assert.NotContains(t, page, "<td>local</td>", "not the service's administrator")
		_, page = ca.get("/admin/domains")
		assert.Contains(t, page, tenant)
		assert.NotContains(t, page, otherTenant)

		ca.requireSubmit("/admin/customers/"+o.customer+"/edit", url.Values{"branding_url": {"https://brand.example.test"}, "quota": {"5"}}, http.StatusSeeOther)
		cu, err := f.app.Management.Customer(context.Background(), f.caller(adminUser, ""), o.customer)
		require.NoError(t, err)
		assert.Equal(t, "https://brand.example.test", deref(cu.BrandingURL))
		assert.Nil(t, cu.Quota, "a customer administrator changes the branding only")

		ca.requireSubmit("/admin/users/new", url.Values{"username": {"colleague"}, "domain": {tenant}, "password": {"colleague words"}}, http.StatusSeeOther)
		ca.requireSubmit("/admin/users/new", url.Values{"username": {"intruder"}, "domain": {otherTenant}, "password": {"intruder words"}}, http.StatusNotFound)
		assert.Equal(t, http.StatusUnauthorized, f.loginAs("intruder", "intruder words"))

		other := itoa(o.otherUser)
		for _, tc := range []struct {
			method, path string
			form         url.Values
		}{
			{"GET", "/admin/customers/" + o.otherCustomer + "/edit", nil},
			{"POST", "/admin/customers/" + o.otherCustomer + "/edit", url.Values{"branding_url": {"https://evil.test"}}},
			{"GET", "/admin/customers/" + o.otherCustomer + "/delete", nil},
			{"POST", "/admin/customers/" + o.otherCustomer + "/delete", nil},
			{"GET", "/admin/users/" + other + "/edit", nil},
			{"POST", "/admin/users/" + other + "/edit", url.Values{"username": {"hijacked"}, "domain": {tenant}}},
			{"GET", "/admin/users/" + other + "/delete", nil},
			{"POST", "/admin/users/" + other + "/delete", nil},
			{"GET", "/admin/domains/" + otherTenant + "/delete", nil},
			{"POST", "/admin/domains/" + otherTenant + "/delete", nil},
			{"GET", "/admin/groups/" + o.otherGroup + "/edit", nil},
			{"POST", "/admin/groups/" + o.otherGroup + "/edit", url.Values{"groupname": {"hijacked"}}},
			{"GET", "/admin/groups/" + o.otherGroup + "/delete", nil},
			{"POST", "/admin/groups/" + o.otherGroup + "/delete", nil},
			{"GET", "/admin/header-checks/" + o.otherCheck + "/delete", nil},
			{"POST", "/admin/header-checks/" + o.otherCheck + "/delete", nil},
		} {
			var resp *http.Response
			var body string
			if tc.method == "POST" {
				resp, body = ca.submit(tc.path, tc.form)
			} else {
				resp, body = ca.get(tc.path)
			}
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %s", tc.method, tc.path)
			assert.NotContains(t, body, otherTenant, "%s %s", tc.method, tc.path)
		}

		_, err = f.app.Management.Customer(context.Background(), f.caller(adminUser, ""), o.otherCustomer)
		assert.NoError(t, err, "the other customer is still there")
		assert.Equal(t, o.otherUser, f.uid(otherAuditor), "the other customer's user is unchanged")
		groups, err := f.app.Management.Groups(context.Background(), f.caller(adminUser, otherHost))
		require.NoError(t, err)
		require.Len(t, groups, 1)
		assert.Equal(t, "other-group", groups[0].Groupname)
		checks, err := f.app.Management.HeaderChecks(context.Background(), f.caller(adminUser, otherHost))
		require.NoError(t, err)
		assert.Len(t, checks, 1)
		domains, err := f.app.Management.Domains(context.Background(), f.caller(adminUser, ""))
		require.NoError(t, err)
		assert.Len(t, domains, 2)
	})
}
