// Package certificate defines the body of an erasure certificate and its hash.
//
// The certificate body is a small JSON object built only from ledger events: the erasure
// request's own events (who asked, for which addresses, who approved, how many emails were
// deleted) and the stored completion event (its position, time and chain hash). Its
// certificate_hash is the lower-case hex SHA-256 of the body's RFC 8785 canonical JSON.
// Because the body includes the completion event's chain hash, the hash commits to every
// event of the ledger up to the completion, and a regulator holding the body and the
// ledger's public key can recompute it without mailledger's code:
//
//	sha256( JCS( body ) ) == certificate_hash
//
// BodyFromEvents is the only derivation of a body: the bundle, its verifier and the
// gdpr_requests projection all call it, so the same events always give the same body and
// hash, and a projection rebuild reproduces certificate_hash exactly. The rendering of a
// body for people (HTML, PDF) is in package certificate/render.
package certificate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
)

// Format names the version of the body's layout; it is part of the hashed body.
const Format = "mailledger-erasure-certificate/v1"

// Body is the content of an erasure certificate that certificate_hash commits to. Times
// are UTC with microseconds (eventstore.TimeFormat), exactly as recorded_at appears in the
// ledger's canonical event bytes. Empty strings stand for unset values.
type Body struct {
	Format              string   `json:"format"`
	RequestID           string   `json:"request_id"`
	TenantID            string   `json:"tenant_id"`
	EmailAddresses      []string `json:"email_addresses"`
	RequesterName       string   `json:"requester_name"`
	CreatedAt           string   `json:"created_at"`
	CompletedAt         string   `json:"completed_at"`
	DeletedCount        int      `json:"deleted_count"`
	RedactedCount       int      `json:"redacted_count"`
	ApprovedBy          string   `json:"approved_by"`
	ApprovedAt          string   `json:"approved_at"`
	CompletionPosition  int64    `json:"completion_position"`
	CompletionChainHash string   `json:"completion_chain_hash"`
}

// newBody builds the certificate body of req from its stored completion event (the
// erasure.execution_completed record of req's stream). req holds the state after its
// events were applied; the deleted count is read from req, the completion time, position
// and chain hash from completion. Only BodyFromEvents calls it: a body built from a
// request state obtained any other way (a table row, upcast payloads) could differ from
// the one a regulator derives from the bundle.
func newBody(req *erasure.Request, completion *eventstore.Record) Body {
	addrs := req.Addresses
	if addrs == nil {
		addrs = []string{}
	}
	return Body{
		Format: Format, RequestID: req.RequestID, TenantID: req.TenantID, EmailAddresses: addrs,
		RequesterName: req.RequesterName, CreatedAt: req.CreatedAt.UTC().Format(eventstore.TimeFormat),
		CompletedAt:  completion.RecordedAt.UTC().Format(eventstore.TimeFormat),
		DeletedCount: req.DeletedCount, RedactedCount: 0,
		ApprovedBy: req.ApprovedBy, ApprovedAt: approvedAt(req),
		CompletionPosition: completion.Position, CompletionChainHash: completion.ChainHash.String(),
	}
}

func approvedAt(req *erasure.Request) string {
	if req.ApprovedAt.IsZero() {
		return ""
	}
	return req.ApprovedAt.UTC().Format(eventstore.TimeFormat)
}

// Canonical returns the RFC 8785 canonical JSON of the body: the bytes that are hashed.
func (b Body) Canonical() ([]byte, error) {
	out, err := eventstore.CanonicalJSON(b)
	if err != nil {
		return nil, fmt.Errorf("certificate body: %w", err)
	}
	return out, nil
}

// Hash returns the body's certificate_hash: the lower-case hex SHA-256 of Canonical.
func (b Body) Hash() (string, error) {
	canon, err := b.Canonical()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}
