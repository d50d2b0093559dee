package certificate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
)

// ErrInvalidBundle means a certificate bundle does not verify; the wrapping error names
// the part that is wrong (the body, an event, a proof, the chain link or the checkpoint).
var ErrInvalidBundle = errors.New("invalid certificate bundle")

// Result is what a verified bundle proves.
type Result struct {
	// Body is the certificate body, rebuilt from the events and equal to the bundle's.
	Body Body
	// CertificateHash is the certificate_hash, SHA-256 of the canonical body.
	CertificateHash string
	// Events is the number of events of the request's stream in the bundle.
	Events int
	// Checkpoint is the signed checkpoint that every event was proven against.
	Checkpoint *eventstore.Checkpoint
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidBundle, fmt.Sprintf(format, args...))
}

// VerifyBundle is VerifyBundleOrigin with the ledger's origin taken to be the name of
// publicKey, as it is when the service created its key (MAILLEDGER_LEDGER_ORIGIN names
// both).
func VerifyBundle(bundleJSON []byte, publicKey string) (*Result, error) {
	return VerifyBundleOrigin(bundleJSON, publicKey, "")
}

// VerifyBundleOrigin checks a certificate bundle offline, with no database: the
// checkpoint's signature with publicKey (the ledger's signed-note verifier key text) and
// its origin line (origin, or the key's name when origin is ""), each event's leaf hash
// from its canonical bytes and its RFC 6962 inclusion proof to the checkpoint's root,
// that the events are the whole stream of one request in version order, the chain link
// of the completion event, that the body is the one derived from the events, and that
// the certificate hash is SHA-256 of the canonical body. A bundle with a member that is
// not part of its format is refused. Any failure wraps ErrInvalidBundle and names what
// is wrong, in a sentence with hashes in hex.
func VerifyBundleOrigin(bundleJSON []byte, publicKey, origin string) (*Result, error) {
	if len(bytes.TrimSpace(bundleJSON)) == 0 {
		return nil, invalid("empty file")
	}
	var b Bundle
	if err := jsonv2.Unmarshal(bundleJSON, &b, jsonv2.RejectUnknownMembers(true)); err != nil {
		return nil, invalid("not a bundle: %s", describeJSONError(err))
	}
	if b.Format != BundleFormat {
		return nil, invalid("format is %q; want %q", b.Format, BundleFormat)
	}
	cp, err := openCheckpoint(b.Checkpoint, publicKey, origin)
	if err != nil {
		return nil, err
	}
	recs, leaves, err := verifyEvents(b.Events, cp)
	if err != nil {
		return nil, err
	}
	if err := checkStream(recs); err != nil {
		return nil, err
	}
	if err := checkChainLink(b.Completion, &recs[len(recs)-1], leaves[len(leaves)-1]); err != nil {
		return nil, err
	}
	body, err := checkBody(b.Certificate, recs)
	if err != nil {
		return nil, err
	}
	return &Result{Body: body, CertificateHash: b.Certificate.Hash, Events: len(recs), Checkpoint: cp}, nil
}

// openCheckpoint verifies the checkpoint note's signature with publicKey, parses it and
// checks its origin: a checkpoint of another log signed with the same key proves nothing
// about this ledger. An empty origin means the key's name.
func openCheckpoint(text, publicKey, origin string) (*eventstore.Checkpoint, error) {
	if err := checkSignatureEncoding(text); err != nil {
		return nil, err
	}
	cp, err := eventstore.OpenCheckpoint([]byte(text), publicKey)
	if err != nil {
		return nil, invalid("checkpoint: does not verify with the public key: %v", err)
	}
	source := "--origin"
	if origin == "" {
		origin, _, _ = strings.Cut(publicKey, "+")
		source = "the public key's name; give --origin when the ledger's origin differs"
	}
	if cp.Origin != origin {
		return nil, invalid("checkpoint: its origin is %q, but the ledger's origin is %q (%s)", cp.Origin, origin, source)
	}
	return cp, nil
}

// verifyEvents parses each event's record, checks that it is the canonical form of its
// fields, and proves its leaf into the checkpoint's tree. It returns the records and
// their leaf hashes.
func verifyEvents(events []BundleEvent, cp *eventstore.Checkpoint) ([]eventstore.Record, []eventstore.Hash, error) {
	if len(events) == 0 {
		return nil, nil, invalid("no events")
	}
	recs := make([]eventstore.Record, len(events))
	leaves := make([]eventstore.Hash, len(events))
	for i, ev := range events {
		rec, err := parseRecord(ev.Record)
		if err != nil {
			return nil, nil, invalid("event %d: %v", i+1, err)
		}
		leaf, err := proveLeaf(ev, rec, cp)
		if err != nil {
			return nil, nil, invalid("event %d (position %d, %s): %v", i+1, rec.Position, rec.EventType, err)
		}
		recs[i], leaves[i] = *rec, leaf
	}
	return recs, leaves, nil
}

// proveLeaf checks the event's leaf index and its inclusion proof against the checkpoint,
// and returns the leaf hash SHA-256(0x00 ‖ record).
func proveLeaf(ev BundleEvent, rec *eventstore.Record, cp *eventstore.Checkpoint) (eventstore.Hash, error) {
	var leaf eventstore.Hash
	if ev.LeafIndex != rec.Position-1 {
		return leaf, fmt.Errorf("leaf_index %d is not position − 1", ev.LeafIndex)
	}
	copy(leaf[:], rfc6962.DefaultHasher.HashLeaf([]byte(ev.Record)))
	hashes, err := decodeProof(ev.InclusionProof)
	if err != nil {
		return leaf, err
	}
	if err := checkProofShape(ev.LeafIndex, cp.Size, len(hashes)); err != nil {
		return leaf, err
	}
	err = proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(ev.LeafIndex), uint64(cp.Size), leaf[:], hashes, cp.RootHash[:])
	var mismatch proof.RootMismatchError
	if errors.As(err, &mismatch) {
		return leaf, fmt.Errorf("inclusion proof leads to the root %x, not the checkpoint's root %x (tree size %d)",
			mismatch.CalculatedRoot, mismatch.ExpectedRoot, cp.Size)
	}
	if err != nil {
		return leaf, fmt.Errorf("inclusion proof does not verify against the checkpoint (tree size %d): %v", cp.Size, err)
	}
	return leaf, nil
}

// checkProofShape checks that the leaf is in the checkpoint's tree and that the proof has
// as many hashes as the RFC 6962 audit path of that leaf in a tree of that size.
func checkProofShape(index, size int64, got int) error {
	if index >= size {
		return fmt.Errorf("leaf index %d is not in the checkpoint's tree of size %d", index, size)
	}
	inner := bits.Len64(uint64(index) ^ uint64(size-1))
	want := inner + bits.OnesCount64(uint64(index)>>inner)
	if got != want {
		return fmt.Errorf("inclusion proof has %d hashes; a leaf at index %d of a tree of size %d needs %d", got, index, size, want)
	}
	return nil
}

// wireRecord is the hashed record of an event as JSON (docs/ledger.md, "Hashing").
type wireRecord struct {
	EventType     string         `json:"event_type"`
	Metadata      jsontext.Value `json:"metadata"`
	Payload       jsontext.Value `json:"payload"`
	Position      int64          `json:"position"`
	RecordedAt    string         `json:"recorded_at"`
	SchemaVersion int            `json:"schema_version"`
	StreamID      string         `json:"stream_id"`
	StreamType    string         `json:"stream_type"`
	StreamVersion int64          `json:"stream_version"`
	TenantID      string         `json:"tenant_id"`
}

// parseRecord reads a canonical record and checks that it is exactly the canonical form
// of the fields it holds, so that what is verified is what was hashed.
func parseRecord(text string) (*eventstore.Record, error) {
	var w wireRecord
	if err := jsonv2.Unmarshal([]byte(text), &w, jsonv2.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("record is not an event record: %s", describeJSONError(err))
	}
	at, err := time.Parse(eventstore.TimeFormat, w.RecordedAt)
	if err != nil {
		return nil, fmt.Errorf("record recorded_at %q: %v", w.RecordedAt, err)
	}
	rec := &eventstore.Record{Position: w.Position, StreamID: w.StreamID, StreamType: w.StreamType,
		StreamVersion: w.StreamVersion, TenantID: w.TenantID, EventType: w.EventType, SchemaVersion: w.SchemaVersion,
		Payload: []byte(w.Payload), Metadata: []byte(w.Metadata), RecordedAt: at}
	if !bytes.Equal(rec.CanonicalBytes(), []byte(text)) || !canonical(rec.Payload) || !canonical(rec.Metadata) {
		return nil, errors.New("record is not in RFC 8785 canonical form")
	}
	return rec, nil
}

// canonical reports whether doc is RFC 8785 JSON (no duplicate names, nothing to change).
func canonical(doc []byte) bool {
	canon, err := eventstore.Canonicalize(doc)
	return err == nil && bytes.Equal(canon, doc)
}

// checkStream checks that the records are one request's whole stream, versions 1, 2, 3 …
// in increasing ledger positions.
func checkStream(recs []eventstore.Record) error {
	first := recs[0]
	for i, rec := range recs {
		if rec.StreamVersion != int64(i+1) {
			return invalid("event %d (position %d): stream_version %d; want %d (an event is missing, added or out of order)",
				i+1, rec.Position, rec.StreamVersion, i+1)
		}
		if rec.StreamID != first.StreamID || rec.StreamType != erasure.StreamType || rec.TenantID != first.TenantID {
			return invalid("event %d (position %d): stream %s of tenant %s is not the request's stream %s of tenant %s",
				i+1, rec.Position, rec.StreamID, rec.TenantID, first.StreamID, first.TenantID)
		}
		if i > 0 && rec.Position <= recs[i-1].Position {
			return invalid("event %d: position %d does not follow position %d", i+1, rec.Position, recs[i-1].Position)
		}
	}
	return nil
}

// checkChainLink checks chain_hash = SHA-256(previous_chain_hash ‖ leaf) for the last
// event, and sets its ChainHash.
func checkChainLink(link ChainLink, last *eventstore.Record, leaf eventstore.Hash) error {
	if link.Position != last.Position {
		return invalid("completion: chain link is for position %d, but the last event is at position %d", link.Position, last.Position)
	}
	prev, err := parseHex(link.PreviousChainHash)
	if err != nil {
		return invalid("completion: previous_chain_hash: %v", err)
	}
	chain, err := parseHex(link.ChainHash)
	if err != nil {
		return invalid("completion: chain_hash: %v", err)
	}
	if got := eventstore.NextChainHash(prev, leaf); got != chain {
		return invalid("completion: chain link broken: SHA-256(previous_chain_hash ‖ leaf hash) is %s, not chain_hash %s", got, chain)
	}
	last.ChainHash = chain
	return nil
}

// checkBody checks the hash of the bundle's body and that the body is the one the events
// give, and returns it.
func checkBody(c BundleCertificate, recs []eventstore.Record) (Body, error) {
	sum := sha256.Sum256([]byte(c.Body))
	if got := hex.EncodeToString(sum[:]); got != c.Hash {
		return Body{}, invalid("certificate: hash %q is not the SHA-256 of the body (%s)", c.Hash, got)
	}
	derived, err := BodyFromEvents(recs)
	if err != nil {
		return Body{}, invalid("events: %v", err)
	}
	canon, err := derived.Canonical()
	if err != nil {
		return Body{}, invalid("events: %v", err)
	}
	if !bytes.Equal(canon, []byte(c.Body)) {
		return Body{}, invalid("certificate body does not match the body derived from the events: %s", bodyDiff(c.Body, canon))
	}
	return derived, nil
}

// bodyDiff names the members of the given body that differ from the derived one.
func bodyDiff(given string, derived []byte) string {
	var g, d map[string]jsontext.Value
	if err := jsonv2.Unmarshal([]byte(given), &g); err != nil {
		return fmt.Sprintf("the body is not a JSON object (%v)", err)
	}
	if err := jsonv2.Unmarshal(derived, &d); err != nil {
		return err.Error()
	}
	var diffs []string
	for name, want := range d {
		if got, ok := g[name]; !ok || !bytes.Equal(got, want) {
			diffs = append(diffs, fmt.Sprintf("%s is %s, the events give %s", name, orMissing(got, ok), want))
		}
	}
	for name := range g {
		if _, ok := d[name]; !ok {
			diffs = append(diffs, "unexpected member "+name)
		}
	}
	if len(diffs) == 0 {
		return "the body is not in RFC 8785 canonical form"
	}
	return joinSorted(diffs)
}
