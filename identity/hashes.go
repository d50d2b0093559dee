package identity

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
)

// errNotAHash means a stored or given password is not in an encoded form this package
// verifies.
var errNotAHash = errors.New("not a bcrypt or argon2id hash")

// ValidHash reports whether s is an encoded password hash that Authenticate verifies: a
// bcrypt hash ($2a$, $2b$ or $2y$, as PHP's password_hash writes it) or an argon2id hash
// in the PHC form ($argon2id$v=19$m=…,t=…,p=…$salt$hash). The management API stores only
// such hashes, never a password.
func ValidHash(s string) bool {
	if isBcrypt(s) {
		_, err := bcrypt.Cost([]byte(s))
		return err == nil
	}
	_, err := parseArgon2id(s)
	return err == nil
}

func isBcrypt(s string) bool {
	return len(s) == 60 && (strings.HasPrefix(s, "$2a$") || strings.HasPrefix(s, "$2b$") || strings.HasPrefix(s, "$2y$"))
}

// argon2idHash is a parsed PHC-form argon2id hash.
type argon2idHash struct {
	memory  uint32
	time    uint32
	threads uint8
	salt    []byte
	key     []byte
}

// parseArgon2id reads $argon2id$v=19$m=M,t=T,p=P$salt$key (unpadded standard base64).
func parseArgon2id(s string) (*argon2idHash, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v=19" {
		return nil, errNotAHash
	}
	var h argon2idHash
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.memory, &h.time, &h.threads); err != nil {
		return nil, errNotAHash
	}
	var err error
	if h.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(h.salt) < 8 {
		return nil, errNotAHash
	}
	if h.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(h.key) < 16 {
		return nil, errNotAHash
	}
	// Bounds that keep a stored hash from costing the server more than 1 GiB or long CPU.
	if h.memory < 8 || h.memory > 1<<20 || h.time < 1 || h.time > 16 || h.threads < 1 {
		return nil, errNotAHash
	}
	return &h, nil
}

// comparePassword checks password against an encoded bcrypt or argon2id hash in
// constant time; nil means it matches.
func comparePassword(hash, password string) error {
	if isBcrypt(hash) {
		return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password))
	}
	h, err := parseArgon2id(hash)
	if err != nil {
		return err
	}
	key := argon2.IDKey([]byte(password), h.salt, h.time, h.memory, h.threads, uint32(len(h.key)))
	if subtle.ConstantTimeCompare(key, h.key) != 1 {
		return bcrypt.ErrMismatchedHashAndPassword
	}
	return nil
}
