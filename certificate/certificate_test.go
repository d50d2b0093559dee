package certificate_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
)

func sample(t *testing.T) (*erasure.Request, *eventstore.Record) {
	t.Helper()
	chain, err := eventstore.ParseHash("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
	require.NoError(t, err)
	req := &erasure.Request{
		RequestID: "GDPR-2026-00007", TenantID: "acme", Addresses: []string{"a@x.test", "b@x.test"},
		RequesterName: "Ann Example", CreatedAt: time.Date(2026, 11, 2, 9, 30, 0, 123456000, time.UTC),
		ApprovedBy: "approver", ApprovedAt: time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC), DeletedCount: 42,
	}
	rec := &eventstore.Record{Position: 1234, RecordedAt: time.Date(2026, 11, 3, 10, 5, 0, 500, time.FixedZone("CET", 3600)), ChainHash: chain}
	return req, rec
}

// TestHashIsSHA256OfCanonicalBody recomputes the hash from the body written out by hand
// in RFC 8785 form (keys sorted, no spaces), as a regulator would without our code.
func TestHashIsSHA256OfCanonicalBody(t *testing.T) {
	req, rec := sample(t)
	want := `{"approved_at":"2026-11-03T10:00:00.000000Z","approved_by":"approver",` +
		`"completed_at":"2026-11-03T09:05:00.000000Z",` +
		`"completion_chain_hash":"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",` +
		`"completion_position":1234,"created_at":"2026-11-02T09:30:00.123456Z","deleted_count":42,` +
		`"email_addresses":["a@x.test","b@x.test"],"format":"mailledger-erasure-certificate/v1",` +
		`"redacted_count":0,"request_id":"GDPR-2026-00007","requester_name":"Ann Example","tenant_id":"acme"}`
	body := certificate.NewBody(req, rec)
	canon, err := body.Canonical()
	require.NoError(t, err)
	assert.Equal(t, want, string(canon))
	sum := sha256.Sum256([]byte(want))
	assert.Equal(t, hex.EncodeToString(sum[:]), certificate.CertificateHash(req, rec))
}

// TestHashCommitsToEveryField checks that changing any input changes the hash.
func TestHashCommitsToEveryField(t *testing.T) {
	req, rec := sample(t)
	base := certificate.CertificateHash(req, rec)
	changes := map[string]func(r *erasure.Request, c *eventstore.Record){
		"request id":  func(r *erasure.Request, _ *eventstore.Record) { r.RequestID = "GDPR-2026-00008" },
		"address":     func(r *erasure.Request, _ *eventstore.Record) { r.Addresses = []string{"a@x.test"} },
		"deleted":     func(r *erasure.Request, _ *eventstore.Record) { r.DeletedCount++ },
		"approver":    func(r *erasure.Request, _ *eventstore.Record) { r.ApprovedBy = "someone" },
		"created at":  func(r *erasure.Request, _ *eventstore.Record) { r.CreatedAt = r.CreatedAt.Add(time.Microsecond) },
		"position":    func(_ *erasure.Request, c *eventstore.Record) { c.Position++ },
		"chain hash":  func(_ *erasure.Request, c *eventstore.Record) { c.ChainHash[31] ^= 1 },
		"recorded at": func(_ *erasure.Request, c *eventstore.Record) { c.RecordedAt = c.RecordedAt.Add(time.Second) },
	}
	for name, change := range changes {
		r, c := sample(t)
		change(r, c)
		assert.NotEqual(t, base, certificate.CertificateHash(r, c), name)
	}
	r, c := sample(t)
	assert.Equal(t, base, certificate.CertificateHash(r, c), "the same inputs give the same hash")
}
