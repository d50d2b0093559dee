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

// loginAs logs username in with password through the form and reports the status.
func (f *fixture) loginAs(username, pw string) int {
	f.t.Helper()
	resp, _ := f.browser().post("/login", url.Values{"username": {username}, "password": {pw}})
	return resp.StatusCode
}

// requireSubmit submits form to path and requires status.
func (b *browser) requireSubmit(path string, form url.Values, status int) string {
	b.f.t.Helper()
	resp, body := b.submit(path, form)
	require.Equal(b.f.t, status, resp.StatusCode, "POST %s: %s", path, body)
	return body
}

// TestAdminUsersThroughForms: the global administrator adds a user, who can log in; edits
// them (an empty password keeps the password, a new one replaces it); deletes them. Each
// step is the management API's ledger event, and the password is never shown.
func TestAdminUsersThroughForms(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		f.makeAdminObjects()
		admin := f.login(adminUser)
		_, page := admin.get("/admin/users/new")
		assert.Contains(t, page, `type="password"`)
		admin.requireSubmit("/admin/users/new", url.Values{"username": {"newbie"}, "realname": {"New Bie"}, "email": {"newbie@example.test"},
			"domain": {tenant}, "password": {"first secret words"}, "isadmin": {"0"}}, http.StatusSeeOther)
		assert.Equal(t, 1, f.countEvents("management.user_added"))
		assert.Equal(t, http.StatusSeeOther, f.loginAs("newbie", "first secret words"), "the new user logs in")
		uid := itoa(f.uid("newbie"))
		_, page = admin.get("/admin/users")
		assert.Contains(t, page, "newbie@example.test")
		_, page = admin.get("/admin/users/" + uid + "/edit")
		assert.Contains(t, page, "New Bie")
		assert.NotContains(t, page, "$2a$", "no password hash in the form")

		admin.requireSubmit("/admin/users/"+uid+"/edit", url.Values{"username": {"newbie"}, "realname": {"Renamed"}, "email": {"renamed@example.test"},
			"domain": {tenant}, "password": {""}, "isadmin": {"2"}}, http.StatusSeeOther)
		u, err := f.users.ByUsername(context.Background(), "newbie")
		require.NoError(t, err)
		assert.Equal(t, "Renamed", u.Realname)
		assert.Equal(t, "auditor", u.Role.String())
		assert.Equal(t, http.StatusSeeOther, f.loginAs("newbie", "first secret words"), "an empty password keeps the password")
		admin.requireSubmit("/admin/users/"+uid+"/edit", url.Values{"username": {"newbie"}, "domain": {tenant}, "password": {"second secret words"}, "isadmin": {"2"}}, http.StatusSeeOther)
		assert.Equal(t, http.StatusSeeOther, f.loginAs("newbie", "second secret words"))
		assert.Equal(t, http.StatusUnauthorized, f.loginAs("newbie", "first secret words"), "the old password no longer works")
		assert.Equal(t, 2, f.countEvents("management.user_updated"))

		_, page = admin.get("/admin/users/" + uid + "/delete")
		assert.Contains(t, page, "Confirm: delete")
		admin.requireSubmit("/admin/users/"+uid+"/delete", nil, http.StatusSeeOther)
		assert.Equal(t, 1, f.countEvents("management.user_deleted"))
		_, page = admin.get("/admin/users")
		assert.NotContains(t, page, "renamed@example.test")
	})
}

// TestAdminObjectsThroughForms: the global administrator adds, edits and deletes a
// domain, a customer (with its administrator), a group and a header check through the
// forms, each with the management API's ledger event.
func TestAdminObjectsThroughForms(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		admin := f.login(adminUser)

		admin.requireSubmit("/admin/domains/new", url.Values{"domain": {"Acme.Test"}}, http.StatusSeeOther)
		_, page := admin.get("/admin/domains")
		assert.Contains(t, page, "acme.test", "the domain, lower-cased by the use case")

		_, page = admin.get("/admin/customers/new")
		assert.Regexp(t, `name="enable_purge">.*<option value="0" selected>no</option>`, page, "a new customer's purge is off, as add_customer's default")
		assert.Regexp(t, `name="enabled"><option value="1" selected>yes</option>`, page)
		admin.requireSubmit("/admin/customers/new", url.Values{"customer_id": {"acme"}, "domain": {"acme.test"}, "customer_address": {"boss@acme.test"},
			"admin_password": {"acme admin words"}, "quota": {"1000"}, "enable_purge": {"0"}, "enabled": {"1"}}, http.StatusSeeOther)
		assert.Equal(t, http.StatusSeeOther, f.loginAs("boss@acme.test", "acme admin words"), "the customer's administrator logs in")
		customers, err := f.app.Management.Customers(context.Background(), f.caller(adminUser, ""))
		require.NoError(t, err)
		require.Len(t, customers, 1)
		id := customers[0].ID
		admin.requireSubmit("/admin/customers/"+id+"/edit", url.Values{"domain": {"acme.test"}, "quota": {"2000"}, "enable_purge": {"1"}, "enabled": {"1"},
			"branding_url": {"https://brand.acme.test"}}, http.StatusSeeOther)
		cu, err := f.app.Management.Customer(context.Background(), f.caller(adminUser, ""), id)
		require.NoError(t, err)
		assert.Equal(t, "2000", deref(cu.Quota))
		assert.Equal(t, "https://brand.acme.test", deref(cu.BrandingURL))
		assert.Equal(t, "1", cu.EnablePurge)

		body := admin.requireSubmit("/admin/domains/acme.test/delete", nil, http.StatusConflict)
		assert.Contains(t, body, "in use", "a domain with a customer and users stays")
		admin.requireSubmit("/admin/customers/"+id+"/delete", nil, http.StatusSeeOther)
		_, page = admin.get("/admin/customers")
		assert.NotContains(t, page, "<td>acme</td>", "the customer is gone from the list")
		admin.requireSubmit("/admin/domains/new", url.Values{"domain": {"spare.test"}, "mapped": {"acme.test"}}, http.StatusSeeOther)
		_, page = admin.get("/admin/domains/spare.test/delete")
		assert.Contains(t, page, "Confirm: delete")
		admin.requireSubmit("/admin/domains/spare.test/delete", nil, http.StatusSeeOther)
		_, page = admin.get("/admin/domains")
		assert.NotContains(t, page, "spare.test")

		admin.requireSubmit("/admin/groups/new", url.Values{"groupname": {"staff"}, "email": {"a@acme.test\nb@acme.test"}}, http.StatusSeeOther)
		groups, err := f.app.Management.Groups(context.Background(), f.caller(adminUser, ""))
		require.NoError(t, err)
		require.Len(t, groups, 1)
		admin.requireSubmit("/admin/groups/"+groups[0].ID+"/edit", url.Values{"groupname": {"staff2"}, "email": {"c@acme.test"}}, http.StatusSeeOther)
		_, page = admin.get("/admin/groups")
		assert.Contains(t, page, "staff2")
		assert.Contains(t, page, "c@acme.test")
		admin.requireSubmit("/admin/groups/"+groups[0].ID+"/delete", nil, http.StatusSeeOther)

		admin.requireSubmit("/admin/header-checks/new", url.Values{"pattern": {"^X-Spam: yes"}, "tag": {"spam"}}, http.StatusSeeOther)
		checks, err := f.app.Management.HeaderChecks(context.Background(), f.caller(adminUser, ""))
		require.NoError(t, err)
		require.Len(t, checks, 1)
		_, page = admin.get("/admin/header-checks")
		assert.Contains(t, page, "^X-Spam: yes")
		admin.requireSubmit("/admin/header-checks/"+checks[0].ID+"/delete", nil, http.StatusSeeOther)

		for event, want := range map[string]int{
			"management.customer_added": 1, "management.customer_updated": 1, "management.customer_deleted": 1,
			"management.user_added": 1, "management.group_added": 1, "management.group_updated": 1, "management.group_deleted": 1,
			"management.header_check_added": 1, "management.header_check_deleted": 1, "management.domain_added": 2, "management.domain_deleted": 1,
		} {
			assert.Equal(t, want, f.countEvents(event), "events %s", event)
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestAdminValidationChangesNothing: a bad form comes back with the use case's problems
// next to its fields, without the typed password, and nothing is written.
func TestAdminValidationChangesNothing(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		f.makeAdminObjects()
		admin := f.login(adminUser)
		before := f.countEvents("management.user_added")
		body := admin.requireSubmit("/admin/users/new", url.Values{"username": {"bad"}, "email": {"not an address"}, "domain": {tenant},
			"password": {"typed secret words"}, "isadmin": {"7"}}, http.StatusBadRequest)
		assert.Contains(t, body, "must be an email address")
		assert.Contains(t, body, "must be a whole number from 0 to 2")
		assert.Contains(t, body, `value="not an address"`, "the form keeps what was typed")
		assert.NotContains(t, body, "typed secret words", "never the password")
		assert.Equal(t, before, f.countEvents("management.user_added"))
		assert.Equal(t, http.StatusUnauthorized, f.loginAs("bad", "typed secret words"))

		body = admin.requireSubmit("/admin/users/new", url.Values{"username": {plainUser}, "domain": {tenant}, "password": {"x words"}}, http.StatusConflict)
		assert.Contains(t, body, "already exists")
		body = admin.requireSubmit("/admin/users/new", url.Values{"username": {"nopw"}, "domain": {tenant}}, http.StatusBadRequest)
		assert.Contains(t, body, "is required")
		body = admin.requireSubmit("/admin/groups/new", url.Values{"groupname": {"g"}, "email": {"nobody"}}, http.StatusBadRequest)
		assert.Contains(t, body, `&#34;nobody&#34; is not an email address`)
		body = admin.requireSubmit("/admin/header-checks/new", url.Values{"pattern": {"(unclosed"}, "tag": {"t"}}, http.StatusBadRequest)
		assert.Contains(t, body, "must be an RE2 regular expression")
		body = admin.requireSubmit("/admin/customers/new", url.Values{"customer_id": {"bad id!"}, "domain": {"x"}}, http.StatusBadRequest)
		assert.Contains(t, body, "must be a domain name")
		assert.Equal(t, before, f.countEvents("management.user_added"))
		for _, event := range []string{"management.group_added", "management.header_check_added"} {
			assert.Equal(t, 2, f.countEvents(event), "only makeAdminObjects' %s", event)
		}
		assert.Equal(t, 2, f.countEvents("management.customer_added"))
	})
}
