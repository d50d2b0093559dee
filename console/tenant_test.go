package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestTenantSwitch: the global administrator chooses a tenant in the header; the archive,
// the GDPR requests and the legal holds then read and act in it, as the API's `?tenant=`.
// Nobody else sees the switch, and their forged switch is 403 and changes nothing.
func TestTenantSwitch(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		mine := f.makeObjects(tenant, "subject@example.test")
		theirs := f.makeObjects(otherTenant, "subject@other.test")
		id := f.archiveMail(otherTenant, mail("boss@other.test", "staff@other.test", "other tenant memo", "quarterly words"))[0]
		admin := f.login(adminUser)

		_, page := admin.get("/")
		assert.Contains(t, page, `action="/tenant"`)
		for _, option := range []string{"default", tenant, otherTenant} {
			assert.Contains(t, page, `<option value="`+option+`"`)
		}
		_, page = admin.get("/archive?q=quarterly")
		assert.Contains(t, page, "No message matches", "without a switch: the archive of default")
		_, page = admin.get("/compliance/gdpr")
		assert.Contains(t, page, mine.request, "without a switch: every tenant's requests")
		assert.Contains(t, page, theirs.request)

		resp, _ := admin.submit("/tenant", url.Values{"tenant": {otherTenant}, "next": {fmt.Sprintf("/archive/messages/%d", id)}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, "/archive", resp.Header.Get("Location"), "back to the section's list")
		_, page = admin.get("/archive?q=quarterly")
		assert.Contains(t, page, "other tenant memo")
		assert.Regexp(t, `<option value="`+regexp.QuoteMeta(otherTenant)+`" selected>`, page)
		resp, _ = admin.get(fmt.Sprintf("/archive/messages/%d", id))
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		_, page = admin.get("/compliance/gdpr")
		assert.Contains(t, page, theirs.request)
		assert.NotContains(t, page, mine.request)
		_, page = admin.get("/compliance/holds")
		assert.Contains(t, page, theirs.hold)
		assert.NotContains(t, page, mine.hold)
		resp, _ = admin.get("/compliance/gdpr/" + mine.request)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "another tenant's request, as with ?tenant=")

		resp, _ = admin.submit("/compliance/gdpr/new", url.Values{"email_addresses": {"new@other.test"}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		created := regexp.MustCompile(`GDPR-\d{4}-\d{5}`).FindString(resp.Header.Get("Location"))
		assert.Equal(t, "pending", f.status(otherTenant, created), "a new request goes to the chosen tenant")
		resp, _ = admin.submit("/compliance/holds/new", url.Values{"type": {"domain"}, "value": {"other.test"}, "reason": {"audit"}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		_, page = f.login(otherAuditor).get("/compliance/holds")
		assert.Contains(t, page, "audit", "the new hold is the other tenant's")

		resp, page = admin.submit("/tenant", url.Values{"tenant": {"nowhere.test"}})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Contains(t, page, "no such tenant")
		resp, _ = admin.submit("/tenant", url.Values{"tenant": {""}, "next": {"/compliance/gdpr/" + theirs.request}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, "/compliance/gdpr", resp.Header.Get("Location"))
		_, page = admin.get("/compliance/gdpr")
		assert.Contains(t, page, mine.request, "back to every tenant")

		for _, user := range []string{auditorUser, customerAdmin, plainUser} {
			b := f.login(user)
			_, page := b.get("/")
			assert.NotContains(t, page, `action="/tenant"`, "%s sees no switch", user)
			resp, _ := b.submit("/tenant", url.Values{"tenant": {otherTenant}})
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s's forged switch", user)
			_, page = b.get("/archive?q=quarterly")
			assert.NotContains(t, page, "other tenant memo", "%s still reads their own tenant", user)
		}
		_, page = f.login(auditorUser).get("/compliance/gdpr")
		assert.NotContains(t, page, theirs.request)
	})
}
