package certificate

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mailledger/mailledger/eventstore"
)

// parseHex reads a lower-case hex SHA-256 hash; any other spelling of the same value is
// refused, so that no byte of a bundle can change without notice.
func parseHex(s string) (eventstore.Hash, error) {
	var h eventstore.Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) || hex.EncodeToString(b) != s {
		return h, fmt.Errorf("%q is not a lower-case hex SHA-256 hash", s)
	}
	copy(h[:], b)
	return h, nil
}

// decodeBase64 reads standard padded base64 in its one canonical spelling.
func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || base64.StdEncoding.EncodeToString(b) != s {
		return nil, fmt.Errorf("%q is not canonical standard base64", s)
	}
	return b, nil
}

// decodeProof reads an inclusion proof: base64 SHA-256 hashes.
func decodeProof(enc []string) ([][]byte, error) {
	out := make([][]byte, len(enc))
	for i, s := range enc {
		b, err := decodeBase64(s)
		if err != nil || len(b) != 32 {
			return nil, fmt.Errorf("inclusion proof hash %d: %q is not a base64 SHA-256 hash", i+1, s)
		}
		out[i] = b
	}
	return out, nil
}

// checkSignatureEncoding refuses a checkpoint whose signature lines are not in canonical
// base64: golang.org/x/mod/sumdb/note ignores the unused low bits of the last base64
// digit, so without this check one digit of a signature could change and still verify.
func checkSignatureEncoding(note string) error {
	i := strings.LastIndex(note, "\n\n")
	if i < 0 {
		return invalid("checkpoint: no signature lines")
	}
	for _, line := range strings.Split(strings.TrimSuffix(note[i+2:], "\n"), "\n") {
		rest, ok := strings.CutPrefix(line, "— ")
		sp := strings.LastIndexByte(rest, ' ')
		if !ok || sp < 0 {
			return invalid("checkpoint: signature line %q is malformed", line)
		}
		if _, err := decodeBase64(rest[sp+1:]); err != nil {
			return invalid("checkpoint: signature of %s: %v", rest[:sp], err)
		}
	}
	return nil
}

func orMissing(v jsontext.Value, ok bool) string {
	if !ok {
		return "missing"
	}
	return string(v)
}

func joinSorted(parts []string) string {
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}
