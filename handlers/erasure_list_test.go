package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/erasure"
)

// listRequests lists requests as user with query.
func (f *gdprFixture) listRequests(user, query string) requestList {
	f.t.Helper()
	resp, raw := f.getAs(user, gdprPath+query)
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "list %s: %s", query, raw)
	require.Contains(f.t, string(raw), `"requests":[`, "a list is [], never null")
	var l requestList
	decode(f.t, raw, &l)
	return l
}

func requestIDs(l requestList) []string {
	out := []string{}
	for _, r := range l.Requests {
		out = append(out, r.RequestID)
	}
	return out
}

// TestErasureRequestList checks the list: newest first, the status filter, the page, and
// a 400 for every bad query value.
func TestErasureRequestList(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newGDPRFixture(t, d)
		assert.Equal(t, requestList{Requests: []requestJSON{}, Limit: 50}, f.listRequests(adminUser, ""))
		a := f.inState(erasure.StatusPendingApproval, 1)
		b := f.create(auditorUser, "b@people.test")
		c := f.create(adminUser, "c@people.test")
		all := f.listRequests(auditorUser, "")
		assert.Equal(t, []string{c.RequestID, b.RequestID, a.RequestID}, requestIDs(all), "newest first")
		assert.Equal(t, []int{3, 50, 0}, []int{all.Total, all.Limit, all.Offset})
		page := f.listRequests(adminUser, "?limit=1&offset=1")
		assert.Equal(t, []string{b.RequestID}, requestIDs(page))
		assert.Equal(t, []int{3, 1, 1}, []int{page.Total, page.Limit, page.Offset})
		pending := f.listRequests(adminUser, "?status=pending_approval&limit=500")
		assert.Equal(t, []string{a.RequestID}, requestIDs(pending))
		assert.Equal(t, 1, pending.Total)
		assert.Empty(t, f.listRequests(adminUser, "?status=completed").Requests)
		assert.Equal(t, f.request(auditorUser, a.RequestID), pending.Requests[0], "a listed request is the request")

		for query, field := range map[string]string{
			"?status=open": "status", "?status=pending&status=rejected": "status", "?limit=0": "limit",
			"?limit=501": "limit", "?limit=ten": "limit", "?offset=-1": "offset", "?offset=x": "offset",
		} {
			resp, raw := f.getAs(auditorUser, gdprPath+query)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", query, raw)
			e := decodeError(t, raw)
			assert.Equal(t, "validation_failed", e.Error.Code, query)
			assert.Contains(t, e.Error.Details["fields"], field, query)
		}
	})
}

// TestErasureRequestShape checks a request object: exactly the columns of gdpr_requests
// and certificate_available, unset values null, lists [], times RFC 3339 in UTC.
func TestErasureRequestShape(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newGDPRFixture(t, d)
		resp, raw := f.postAs(auditorUser, gdprPath, `{"email_addresses":["Ann@People.test","ann@people.test "]}`)
		require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", raw)
		var fields map[string]json.RawMessage
		decode(t, raw, &fields)
		assert.ElementsMatch(t, requestKeys, keys(fields))
		for _, k := range []string{"requester_name", "blocked_reason", "approved_by", "approved_at",
			"rejection_reason", "executed_at", "certificate_hash"} {
			assert.Equal(t, "null", string(fields[k]), k)
		}
		assert.JSONEq(t, `["ann@people.test"]`, string(fields["email_addresses"]))
		assert.Equal(t, "[]", string(fields["legal_hold_ids"]))
		assert.Equal(t, "false", string(fields["blocked_by_legal_hold"]))
		assert.Equal(t, "false", string(fields["certificate_available"]))
		assert.Equal(t, `"pending"`, string(fields["status"]))
		assert.Regexp(t, `^"GDPR-\d{4}-\d{5}"$`, string(fields["request_id"]))
		assert.Regexp(t, `^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"$`, string(fields["created_at"]))

		var v requestJSON
		decode(t, raw, &v)
		f.drain()
		f.advance(v.RequestID, erasure.StatusCompleted)
		done := f.request(auditorUser, v.RequestID)
		for _, at := range []*string{done.ApprovedAt, done.ExecutedAt} {
			require.NotNil(t, at)
			parsed, err := time.Parse(time.RFC3339, *at)
			require.NoError(t, err)
			assert.WithinDuration(t, time.Now(), parsed, time.Minute)
			assert.Regexp(t, `Z$`, *at)
		}
		assert.True(t, done.CertificateAvailable)
	})
}

func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestErasureCreateErrors checks the validation of a new request's body.
func TestErasureCreateErrors(t *testing.T) {
	t.Parallel()
	f := newGDPRFixture(t, database.SQLite)
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("s%d@people.test", i)
	}
	tooMany, err := json.Marshal(map[string]any{"email_addresses": many})
	require.NoError(t, err)
	cases := []struct {
		name, body, code, field string
	}{
		{"no body", ``, "invalid_json", ""},
		{"truncated", `{"email_addresses":`, "invalid_json", ""},
		{"unknown field", `{"email_addresses":["a@b.test"],"tenant":"x"}`, "invalid_json", ""},
		{"addresses not a list", `{"email_addresses":"a@b.test"}`, "invalid_json", ""},
		{"no addresses", `{"requester_name":"Ann"}`, "validation_failed", "email_addresses"},
		{"empty list", `{"email_addresses":[]}`, "validation_failed", "email_addresses"},
		{"not an address", `{"email_addresses":["Ann <a@b.test>"]}`, "validation_failed", "email_addresses"},
		{"no domain", `{"email_addresses":["ann"]}`, "validation_failed", "email_addresses"},
		{"101 addresses", string(tooMany), "validation_failed", "email_addresses"},
		{"long name", `{"email_addresses":["a@b.test"],"requester_name":"` + longText(256) + `"}`, "validation_failed", "requester_name"},
	}
	for _, tc := range cases {
		resp, raw := f.postAs(auditorUser, gdprPath, tc.body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", tc.name, raw)
		e := decodeError(t, raw)
		assert.Equal(t, tc.code, e.Error.Code, tc.name)
		if tc.field != "" {
			assert.Contains(t, e.Error.Details["fields"], tc.field, tc.name)
		}
	}
	assert.Zero(t, f.head(), "no failed create appended anything")
}

// TestCertificatePDFWithoutService checks that the PDF answers 503 when PDFSERVICE_URL is
// unset, and when the service is down or failing, while the HTML and the bundle work.
func TestCertificatePDFWithoutService(t *testing.T) {
	t.Parallel()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "chromium crashed", http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	for name, pdfURL := range map[string]string{
		"unset":   "",
		"down":    down.URL,
		"failing": failing.URL,
	} {
		f := newGDPRFixture(t, database.SQLite, func(c *app.ApplicationConfig) { c.Certificates.PDFServiceURL = pdfURL })
		v := f.inState(erasure.StatusCompleted, 1)
		base := gdprPath + "/" + v.RequestID + "/certificate"
		resp, raw := f.getAs(auditorUser, base+"/pdf")
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s: %s", name, raw)
		assert.Equal(t, "pdf_service_unavailable", decodeError(t, raw).Error.Code, name)
		resp, raw = f.getAs(auditorUser, base)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s: the HTML certificate works: %s", name, raw)
		resp, raw = f.getAs(auditorUser, base+"/bundle")
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s: the bundle works: %s", name, raw)
		assert.NotContains(t, f.logs.String(), `"level":"ERROR"`, "%s: a PDF service that is down is the operator's warning, not an error", name)
		if name != "unset" {
			assert.Contains(t, f.logs.String(), `"level":"WARN"`, name)
		}
	}
}

// TestSelfApprovalWhenAllowed checks GDPR_DISTINCT_APPROVER=0: the creator may approve.
func TestSelfApprovalWhenAllowed(t *testing.T) {
	t.Parallel()
	f := newGDPRFixture(t, database.SQLite, func(c *app.ApplicationConfig) { c.Erasure.AllowSameApprover = true })
	v := f.inState(erasure.StatusPendingApproval, 1)
	v = f.actOK(auditorUser, v.RequestID, "approve", "", http.StatusOK)
	assert.Equal(t, erasure.StatusApproved, v.Status)
	require.NotNil(t, v.ApprovedBy)
	assert.Equal(t, auditorUser, *v.ApprovedBy)
}
