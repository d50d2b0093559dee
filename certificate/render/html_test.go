package render_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/certificate/render"
)

const testKey = "mailledger+3e5a5d2c+AQ5XjqZfWyLkQlhXJ9wFwkM0Zq4E2cC8w7fU0e0z3kqz"

// sampleBody is the body of the sample request of package certificate's tests: what
// certificate.BodyFromEvents gives for a request created, approved and completed with
// these values.
func sampleBody() certificate.Body {
	return certificate.Body{
		Format: certificate.Format, RequestID: "GDPR-2026-00007", TenantID: "acme",
		EmailAddresses: []string{"a@x.test", "b@x.test"}, RequesterName: "Ann Example",
		CreatedAt: "2026-11-02T09:30:00.123456Z", CompletedAt: "2026-11-03T09:05:00.000000Z",
		DeletedCount: 42, ApprovedBy: "approver", ApprovedAt: "2026-11-03T10:00:00.000000Z",
		CompletionPosition:  1234,
		CompletionChainHash: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
	}
}

func sampleHash(t *testing.T, body certificate.Body) string {
	t.Helper()
	hash, err := body.Hash()
	require.NoError(t, err)
	return hash
}

// TestHTMLNamesEveryField checks that the printable certificate shows what docs/api.md
// and docs/verification.md promise, escaped, and loads nothing from elsewhere.
func TestHTMLNamesEveryField(t *testing.T) {
	body := sampleBody()
	body.EmailAddresses = append(body.EmailAddresses, "o'neil+<x>@x.test")
	view, err := render.NewView(body, testKey)
	require.NoError(t, err)
	page, err := render.HTML(view)
	require.NoError(t, err)
	html := string(page)
	for name, want := range map[string]string{
		"request id":         "GDPR-2026-00007",
		"address a":          "a@x.test",
		"address b":          "b@x.test",
		"escaped address":    "o&#39;neil&#43;&lt;x&gt;@x.test",
		"request date":       "2026-11-02 09:30:00 UTC",
		"completion date":    "2026-11-03 09:05:00 UTC",
		"deleted count":      "<td>42</td>",
		"approver":           "approver, 2026-11-03 10:00:00 UTC",
		"certificate hash":   sampleHash(t, body),
		"ledger position":    "<td>1234</td>",
		"key fingerprint":    render.KeyFingerprint(testKey),
		"verify by command":  "mailledger verify-certificate GDPR-2026-00007.bundle.json --public-key ledger.pub",
		"verify by hand":     "docs/verification.md",
		"one A4 page":        "size: A4",
		"completion chain":   body.CompletionChainHash,
		"requester":          "Ann Example",
		"bundle endpoint":    "/api/v1/admin/gdpr/requests/GDPR-2026-00007/certificate/bundle",
		"redacted count row": "Emails redacted",
	} {
		assert.Contains(t, html, want, name)
	}
	for _, external := range []string{"http://", "https://", "<script", "<img", "<link", "url("} {
		assert.NotContains(t, html, external, "the page must not load anything")
	}
	assert.Equal(t, view.Hash, sampleHash(t, body))
	assert.Equal(t, "mailledger", view.KeyName)
}

// TestKeyFingerprintIsSHA256OfKeyText pins the fingerprint to the documented recipe:
// printf %s "$KEY" | sha256sum.
func TestKeyFingerprintIsSHA256OfKeyText(t *testing.T) {
	want := "bed973dad0942f72801165635b6aff575bd8b89f894da9e59d56211127b86acf"
	assert.Equal(t, want, render.KeyFingerprint(testKey))
	assert.Equal(t, want, render.KeyFingerprint(testKey+"\n"), "a trailing newline of a key file is not part of the key")
}
