package eventstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/transparency-dev/merkle/rfc6962"
)

// Hash is a SHA-256 digest.
type Hash [32]byte

// String is the lower-case hex form used in the database and on the wire.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// ParseHash reads a 64-character hex digest.
func ParseHash(s string) (Hash, error) {
	var h Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("bad hash %q", s)
	}
	copy(h[:], b)
	return h, nil
}

// Record is one stored event, exactly as in the events table. Payload and Metadata are the
// canonical JSON bytes that were hashed.
type Record struct {
	Position      int64     `json:"position"`
	StreamID      string    `json:"stream_id"`
	StreamType    string    `json:"stream_type"`
	StreamVersion int64     `json:"stream_version"`
	TenantID      string    `json:"tenant_id"`
	EventType     string    `json:"event_type"`
	SchemaVersion int       `json:"schema_version"`
	Payload       []byte    `json:"payload"`
	Metadata      []byte    `json:"metadata"`
	RecordedAt    time.Time `json:"recorded_at"`
	LeafHash      Hash      `json:"leaf_hash"`
	ChainHash     Hash      `json:"chain_hash"`

	// Data and DataVersion are the payload and its version after the upcasters ran; they
	// equal Payload and SchemaVersion when no upcaster applies. Never hashed.
	Data        json.RawMessage `json:"-"`
	DataVersion int             `json:"-"`
}

// TimeFormat is the fixed form of recorded_at inside the hashed record: UTC, microseconds.
const TimeFormat = "2006-01-02T15:04:05.000000Z"

// CanonicalBytes is the RFC 8785 canonical JSON of the record's hashed fields: every
// column of the events table except the two hashes. The leaf hash is the RFC 6962 leaf
// hash of these bytes. Payload and Metadata must already be canonical JSON.
func (r *Record) CanonicalBytes() []byte {
	b := make([]byte, 0, 192+len(r.Payload)+len(r.Metadata)+len(r.StreamID))
	b = append(b, `{"event_type":`...)
	b = appendJCSString(b, r.EventType)
	b = append(b, `,"metadata":`...)
	b = append(b, r.Metadata...)
	b = append(b, `,"payload":`...)
	b = append(b, r.Payload...)
	b = append(b, `,"position":`...)
	b = strconv.AppendInt(b, r.Position, 10)
	b = append(b, `,"recorded_at":"`...)
	b = r.RecordedAt.UTC().AppendFormat(b, TimeFormat)
	b = append(b, `","schema_version":`...)
	b = strconv.AppendInt(b, int64(r.SchemaVersion), 10)
	b = append(b, `,"stream_id":`...)
	b = appendJCSString(b, r.StreamID)
	b = append(b, `,"stream_type":`...)
	b = appendJCSString(b, r.StreamType)
	b = append(b, `,"stream_version":`...)
	b = strconv.AppendInt(b, r.StreamVersion, 10)
	b = append(b, `,"tenant_id":`...)
	b = appendJCSString(b, r.TenantID)
	return append(b, '}')
}

// ComputeLeafHash is the RFC 6962 leaf hash, SHA-256(0x00 ‖ CanonicalBytes).
func (r *Record) ComputeLeafHash() Hash {
	var h Hash
	copy(h[:], rfc6962.DefaultHasher.HashLeaf(r.CanonicalBytes()))
	return h
}

// NextChainHash is SHA-256(previous ‖ leaf): the hash chain that links every event to all
// events before it. The chain starts from 32 zero bytes.
func NextChainHash(previous, leaf Hash) Hash {
	var buf [64]byte
	copy(buf[:32], previous[:])
	copy(buf[32:], leaf[:])
	return sha256.Sum256(buf[:])
}

// Canonicalize returns the RFC 8785 form of a JSON document, using jsontext.Value's
// Canonicalize from github.com/go-json-experiment/json (the prototype of Go's
// encoding/json/v2; its canonical form is RFC 8785's, and it is several times faster than
// gowebpki/jcs, against which the tests check it). Integers must stay below 2^53 to
// survive the IEEE-754 number model of RFC 8785.
func Canonicalize(doc []byte) ([]byte, error) {
	v := jsontext.Value(bytes.Clone(doc))
	if err := v.Canonicalize(); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return v, nil
}

// CanonicalJSON marshals v and canonicalizes the result.
func CanonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Canonicalize(raw)
}

const hexDigits = "0123456789abcdef"

// appendJCSString writes s as RFC 8785 (ECMAScript JSON.stringify) serialises a string:
// only '"', '\\' and control characters are escaped. s must be valid UTF-8.
func appendJCSString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c >= 0x20:
			b = append(b, c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	return append(b, '"')
}

func validText(field, s string, max int) error {
	if s == "" {
		return fmt.Errorf("%w: %s is empty", ErrInvalidEvent, field)
	}
	if len(s) > max || !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s must be valid UTF-8 of at most %d bytes", ErrInvalidEvent, field, max)
	}
	return nil
}
