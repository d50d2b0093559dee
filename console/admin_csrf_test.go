package console_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mailledger/mailledger/database"
)

// TestAdminCSRF: the administration's and the ledger's forms without the session's CSRF
// token are 403 and change nothing.
func TestAdminCSRF(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	o := f.makeAdminObjects()
	admin := f.login(adminUser)
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/admin/users/new", url.Values{"username": {"forged"}, "domain": {tenant}, "password": {"forged words"}}},
		{"/admin/users/" + itoa(o.user) + "/delete", nil},
		{"/admin/customers/new", url.Values{"customer_id": {"forged"}, "domain": {"forged.test"}}},
		{"/admin/customers/" + o.customer + "/delete", nil},
		{"/admin/domains/new", url.Values{"domain": {"forged.test"}}},
		{"/admin/groups/new", url.Values{"groupname": {"forged"}}},
		{"/admin/header-checks/new", url.Values{"pattern": {"forged"}, "tag": {"forged"}}},
		{"/ledger/verify", nil},
	} {
		resp, body := admin.post(tc.path, tc.form)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s without a token", tc.path)
		assert.Contains(t, body, "CSRF")
	}
	running, last := f.app.Verification.Status()
	assert.Nil(t, running, "no verification started")
	assert.Nil(t, last)
	for event, want := range map[string]int{"management.user_added": 0, "management.user_deleted": 0, "management.customer_added": 2,
		"management.customer_deleted": 0, "management.domain_added": 2, "management.group_added": 2, "management.header_check_added": 2} {
		assert.Equal(t, want, f.countEvents(event), "events %s", event)
	}
}
