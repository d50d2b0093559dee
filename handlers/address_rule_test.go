package handlers_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
)

// TestRequestAddressesFollowTheAddressRule: an erasure request and a legal hold take an
// address in any form the address rule reads (docs/address-rule.md) and keep its key; a
// quoted local part that needs its quotes is an address; what the rule refuses is named
// with the reason.
func TestRequestAddressesFollowTheAddressRule(t *testing.T) {
	t.Parallel()
	f := newGDPRFixture(t, database.SQLite)
	req := f.create(auditorUser, `"John Doe"@Example.COM`, "kim@Bücher.example", `"kim"@xn--bcher-kva.example`, "pete(his account)@silly.test")
	assert.Equal(t, []string{`"john doe"@example.com`, "kim@xn--bcher-kva.example", "pete@silly.test"}, req.EmailAddresses)

	resp, raw := f.postAs(auditorUser, gdprPath, `{"email_addresses": ["a@x.test", "a@b@x.test", "Name <c@x.test>", "\"open@x.test"]}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", raw)
	fields := fieldsOf(t, raw)
	for _, field := range []string{"email_addresses", "email_addresses[1]", "email_addresses[2]", "email_addresses[3]"} {
		assert.Contains(t, fields, field)
	}
	assert.NotContains(t, fields, "email_addresses[0]")
	assert.Contains(t, fields["email_addresses[2]"], "display name", "the reason is given")

	for body, want := range map[string]string{
		`{"type":"address","value":"\"John Doe\"@Example.com","reason":"r"}`: `"john doe"@example.com`,
		`{"type":"address","value":"Jörg@Bücher.example","reason":"r"}`:      "jörg@xn--bcher-kva.example",
		`{"type":"domain","value":"@Bücher.example","reason":"r"}`:           "xn--bcher-kva.example",
		`{"type":"domain","value":"XN--BCHER-KVA.example.","reason":"r"}`:    "xn--bcher-kva.example",
	} {
		resp, raw := f.postAs(auditorUser, holdsPath, body)
		require.Equal(t, http.StatusCreated, resp.StatusCode, "%s: %s", body, raw)
		var h holdJSON
		decode(t, raw, &h)
		assert.Equal(t, want, h.Value, body)
	}
	resp, raw = f.postAs(auditorUser, holdsPath, `{"type":"address","value":"Name <a@x.test>","reason":"r"}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", raw)
	assert.Contains(t, fieldsOf(t, raw)["value"], "display name")
}
