package handlers_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
)

// fieldsOf returns details.fields of an error answer.
func fieldsOf(t *testing.T, body []byte) map[string]any {
	t.Helper()
	fields, _ := decodeError(t, body).Error.Details["fields"].(map[string]any)
	return fields
}

func TestBodyMustBeAnObject(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	for _, body := range []string{"null", " null ", "[]", `"hold"`, "42", "true", "", `{"type":"address"} {}`} {
		resp, out := f.postAs(adminUser, "/api/v1/admin/legal-holds", body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "body %q: %s", body, out)
		assert.Equal(t, "invalid_json", decodeError(t, out).Error.Code, "body %q", body)
	}
	assert.Equal(t, 0, f.countEvents("legalhold.placed"))
}

func TestInvalidJSONMessagesNameFieldsNotGoTypes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	cases := []struct{ body, want string }{
		{`{"type": 5, "value": "a@x.test", "reason": "r"}`, `field "type": want a string, got a number near line 1, column`},
		{`{"type": "address", "value": ["a@x.test"], "reason": "r"}`, `field "value": want a string, got an array`},
		{`{"type": "address", "value": "a@x.test", "reason": "r", "bogus": 1}`, `unknown field "bogus"`},
		{"{\n  \"type\": \"address\",\n  \"value\": }", "malformed JSON at line 3, column 12"},
		{`{"type": "address"`, "the JSON ends early"},
	}
	for _, tc := range cases {
		resp, out := f.postAs(adminUser, "/api/v1/admin/legal-holds", tc.body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "body %q: %s", tc.body, out)
		e := decodeError(t, out)
		assert.Equal(t, "invalid_json", e.Error.Code)
		assert.Contains(t, e.Error.Message, tc.want, "body %q", tc.body)
		for _, goWord := range []string{"Go ", "struct", "int64", "app.", "cannot unmarshal", "PlaceHoldInput", "[]"} {
			assert.NotContains(t, e.Error.Message, goWord, "body %q: no Go types in %q", tc.body, e.Error.Message)
		}
	}
}

func TestUnsetMatterIsNull(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	resp, out := f.postAs(adminUser, "/api/v1/admin/legal-holds", `{"type": "address", "value": "a@x.test", "reason": "case 1"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", out)
	assert.Contains(t, string(out), `"matter":null`)
	resp, out = f.postAs(adminUser, "/api/v1/admin/legal-holds", `{"type": "address", "value": "b@x.test", "reason": "case 2", "matter": "M-7"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", out)
	assert.Contains(t, string(out), `"matter":"M-7"`)
}

func TestUnknownQueryParametersAre400(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	for _, path := range []string{
		"/api/v1/messages?q=x&bogus=1",
		"/api/v1/messages/1?bogus=1",
		"/api/v1/admin/legal-holds?status=active&bogus=1",
		"/api/v1/admin/gdpr/requests?limit=5&bogus=1",
		"/api/v1/ledger/proof?position=1&bogus=1",
		"/api/v1/ledger/public-key?bogus=1",
		"/api/v1/ediscovery/exports?bogus=1",
		"/api/v1/admin/ediscovery/exports?bogus=1",
	} {
		user := adminUser
		if path == "/api/v1/ediscovery/exports?bogus=1" {
			user = auditorUser
		}
		resp, out := f.getAs(user, path)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", path, out)
		assert.Contains(t, fieldsOf(t, out), "bogus", "%s: the parameter is named", path)
	}
	resp, out := f.getAs(adminUser, "/api/v1/admin/legal-holds?status=active&tenant=default")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "known parameters pass: %s", out)
}

func TestEveryBadAddressIsNamed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	resp, out := f.postAs(adminUser, "/api/v1/admin/gdpr/requests",
		`{"email_addresses": ["a@x.test", "not an address", "b@x.test", "Name <c@x.test>"]}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", out)
	fields := fieldsOf(t, out)
	assert.Contains(t, fields, "email_addresses[1]")
	assert.Contains(t, fields, "email_addresses[3]")
	assert.NotContains(t, fields, "email_addresses[0]")
	assert.NotContains(t, fields, "email_addresses[2]")
}

func TestBatesPrefixErrorSaysWhatIsWrong(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t, database.SQLite)
	for prefix, want := range map[string]string{
		"_ABC":                                 "starts with '_'",
		"AB C":                                 "character ' ' at position 3 is not allowed",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789": "is 36 characters long",
	} {
		resp, out := f.postAs(auditorUser, exportPath, `{"bates_prefix": "`+prefix+`", "email_ids": [1]}`)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", out)
		reason, _ := fieldsOf(t, out)["bates_prefix"].(string)
		assert.Contains(t, reason, want, "prefix %q", prefix)
	}
}
