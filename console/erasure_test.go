package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestErasureFlow: an auditor creates a request in the form, a second auditor approves
// and executes it after the confirm pages, the detail page replays the history from the
// ledger and links the certificates.
func TestErasureFlow(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		f.archiveMail(tenant, mail("subject@example.test", userAddress, "about me", "personal data"))
		creator, approver := f.login(auditorUser), f.login(approverUser)

		resp, page := creator.get("/compliance/gdpr/new")
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, page, `<label for="email_addresses">`)
		resp, page = creator.submit("/compliance/gdpr/new", url.Values{"email_addresses": {"not an address"}})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "an invalid address is refused in the form")
		assert.Contains(t, page, "not an address", "the form keeps what was typed")

		resp, _ = creator.submit("/compliance/gdpr/new", url.Values{"email_addresses": {"Subject@example.test"}, "requester_name": {"Data Subject"}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		path := resp.Header.Get("Location")
		id := strings.TrimPrefix(path, "/compliance/gdpr/")
		require.Regexp(t, `^GDPR-\d{4}-\d{5}$`, id)
		f.drain()
		require.Equal(t, "pending_approval", f.status(tenant, id))

		resp, _ = creator.submit(path+"/approve", nil)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the creator may not approve")
		resp, page = approver.get(path + "/approve")
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, page, "Confirm: approve")
		resp, _ = approver.submit(path+"/approve", nil)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		resp, _ = approver.submit(path+"/execute", nil)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		f.drain()
		require.Equal(t, "completed", f.status(tenant, id))

		resp, page = creator.get(path)
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		for _, want := range []string{"erasure.request_created", "erasure.request_approved", auditorUser, approverUser,
			"127.0.0.1", "completed", path + "/certificate/pdf", path + "/certificate/bundle"} {
			assert.Contains(t, page, want)
		}
		require.NotZero(t, strings.Count(page, "<td class=\"hash\">"), "history rows")
		assert.Len(t, regexp.MustCompile(`<td class="hash">[0-9a-f]{64}</td>`).FindAllString(page, -1),
			strings.Count(page, "<td class=\"hash\">"), "every history row has a leaf hash")

		resp, cert := creator.get(path + "/certificate")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, cert, id)
		resp, bundle := creator.get(path + "/certificate/bundle")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assert.Contains(t, bundle, id)
		resp, _ = creator.get(path + "/certificate/pdf")
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "no PDF service configured")
	})
}

func TestRejectNeedsAReason(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	o := f.makeObjects(tenant, "subject@example.test")
	b := f.login(auditorUser)
	path := "/compliance/gdpr/" + o.request
	resp, page := b.get(path + "/reject")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, page, `<label for="reason">`)
	resp, _ = b.submit(path+"/reject", url.Values{"reason": {"  "}})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "pending_approval", f.status(tenant, o.request))
	resp, _ = b.submit(path+"/reject", url.Values{"reason": {"no legal basis"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "rejected", f.status(tenant, o.request))
	_, page = b.get(path)
	assert.Contains(t, page, "no legal basis")
	resp, _ = b.submit(path+"/execute", nil)
	assert.Equal(t, http.StatusConflict, resp.StatusCode, "a rejected request does not execute")

	_, page = b.get("/compliance/gdpr?status=rejected")
	assert.Contains(t, page, o.request)
	_, page = b.get("/compliance/gdpr?status=approved")
	assert.NotContains(t, page, o.request)
}

func TestLegalHolds(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		b := f.login(auditorUser)
		resp, page := b.submit("/compliance/holds/new", url.Values{"type": {"domain"}, "value": {"not a domain!"}, "reason": {"x"}})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, page)
		resp, _ = b.submit("/compliance/holds/new", url.Values{"type": {"address"}, "value": {"Keep@Example.test"},
			"reason": {"litigation"}, "matter": {"M-1"}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		_, page = b.get("/compliance/holds?status=active")
		assert.Contains(t, page, "keep@example.test")
		id := regexp.MustCompile(`/compliance/holds/(LH-[0-9a-f-]+)/release`).FindStringSubmatch(page)
		require.NotNil(t, id, page)
		resp, page = b.get("/compliance/holds/" + id[1] + "/release")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, "Confirm: release")
		resp, _ = b.submit("/compliance/holds/"+id[1]+"/release", nil)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, "released", f.holdStatus(tenant, id[1]))
		_, page = b.get("/compliance/holds?status=active")
		assert.NotContains(t, page, id[1])
	})
}
