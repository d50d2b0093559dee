package certificate

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mailledger/mailledger/eventstore"
)

// BundleFormat names the layout of a certificate bundle.
const BundleFormat = "mailledger-erasure-bundle/v1"

// Bundle is everything needed to check an erasure certificate offline, in the spirit of
// C2SP tlog-proof: the certificate body and its hash, every event of the request's stream
// exactly as the ledger hashed it, each event's RFC 6962 inclusion proof against one
// signed checkpoint, the chain link of the completion event, and that checkpoint's signed
// note. docs/verification.md describes each member; VerifyBundle checks them all.
type Bundle struct {
	Format      string            `json:"format"`
	Certificate BundleCertificate `json:"certificate"`
	Events      []BundleEvent     `json:"events"`
	Completion  ChainLink         `json:"completion"`
	// Checkpoint is the signed note text of the checkpoint that every proof leads to.
	Checkpoint string `json:"checkpoint"`
}

// BundleCertificate is the certificate itself: Body is the RFC 8785 canonical JSON text
// of the Body (its UTF-8 bytes are what is hashed), Hash the certificate_hash, the
// lower-case hex SHA-256 of those bytes.
type BundleCertificate struct {
	Body string `json:"body"`
	Hash string `json:"hash"`
}

// BundleEvent is one event of the request's stream: Record is the canonical record text
// whose UTF-8 bytes are the leaf (eventstore.Record.CanonicalBytes), LeafIndex its index
// in the ledger's Merkle tree (position − 1), and InclusionProof the RFC 6962 audit path
// from the leaf to the checkpoint's root, as standard base64 hashes, lowest level first.
type BundleEvent struct {
	LeafIndex      int64    `json:"leaf_index"`
	Record         string   `json:"record"`
	InclusionProof []string `json:"inclusion_proof"`
}

// ChainLink ties the completion event to the hash chain: ChainHash, the chain hash of the
// event at Position that the certificate body names, must equal SHA-256(PreviousChainHash
// ‖ leaf hash of that event). Hashes are lower-case hex; PreviousChainHash is 64 zeros at
// position 1.
type ChainLink struct {
	Position          int64  `json:"position"`
	PreviousChainHash string `json:"previous_chain_hash"`
	ChainHash         string `json:"chain_hash"`
}

// BundleInput is what NewBundle assembles: the request's events as stored (the last one
// is the completion, with its ChainHash), one inclusion proof per event against the
// checkpoint, and the chain hash of the event just before the completion.
type BundleInput struct {
	Events            []eventstore.Record
	Proofs            [][][]byte
	PreviousChainHash eventstore.Hash
	Checkpoint        *eventstore.Checkpoint
}

// NewBundle builds the bundle of a completed request from its stored events; the body is
// rebuilt from the events with BodyFromEvents.
func NewBundle(in BundleInput) (*Bundle, error) {
	if len(in.Proofs) != len(in.Events) || in.Checkpoint == nil {
		return nil, errors.New("certificate bundle: one proof per event and a checkpoint are required")
	}
	body, err := BodyFromEvents(in.Events)
	if err != nil {
		return nil, err
	}
	canon, err := body.Canonical()
	if err != nil {
		return nil, err
	}
	hash, err := body.Hash()
	if err != nil {
		return nil, err
	}
	last := in.Events[len(in.Events)-1]
	b := &Bundle{
		Format:      BundleFormat,
		Certificate: BundleCertificate{Body: string(canon), Hash: hash},
		Completion: ChainLink{Position: last.Position, PreviousChainHash: in.PreviousChainHash.String(),
			ChainHash: last.ChainHash.String()},
		Checkpoint: string(in.Checkpoint.Note),
	}
	for i := range in.Events {
		b.Events = append(b.Events, BundleEvent{LeafIndex: in.Events[i].Position - 1,
			Record: string(in.Events[i].CanonicalBytes()), InclusionProof: encodeProof(in.Proofs[i])})
	}
	return b, nil
}

func encodeProof(hashes [][]byte) []string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = base64.StdEncoding.EncodeToString(h)
	}
	return out
}

// JSON returns the bundle as indented JSON, the form served and saved to a file.
func (b *Bundle) JSON() ([]byte, error) {
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("certificate bundle: %w", err)
	}
	return append(out, '\n'), nil
}
