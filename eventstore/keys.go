package eventstore

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Key is the ledger's Ed25519 signing key in Go's signed-note encoding
// (golang.org/x/mod/sumdb/note): checkpoints are signed notes in the C2SP checkpoint form,
// the same as Go's checksum database uses.
type Key struct {
	Signer   note.Signer
	Verifier note.Verifier
	// PublicKey is the verifier key text, "<name>+<hash>+<base64>", handed to regulators.
	PublicKey string
}

// Key file names under $MAILLEDGER_DATA_DIR/keys/.
const (
	privateKeyFile = "ledger.key"
	publicKeyFile  = "ledger.pub"
)

// ErrKey means the signing key could not be read or is malformed.
var ErrKey = errors.New("ledger signing key")

// LoadOrCreateKey reads the key pair under dir, creating it (0600) on first start. name is
// the key name written in signatures (the checkpoint origin: no spaces or '+').
func LoadOrCreateKey(dir, name string) (*Key, error) {
	priv := filepath.Join(dir, privateKeyFile)
	if _, err := os.Stat(priv); errors.Is(err, os.ErrNotExist) {
		if err := createKey(dir, name); err != nil {
			return nil, err
		}
	}
	return LoadKeyFile(priv)
}

func createKey(dir, name string) error {
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return fmt.Errorf("%w: generate: %w", ErrKey, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%w: %w", ErrKey, err)
	}
	if err := writeFileExcl(filepath.Join(dir, privateKeyFile), skey+"\n", 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, publicKeyFile), []byte(vkey+"\n"), 0o644)
}

func writeFileExcl(path, content string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKey, err)
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return fmt.Errorf("%w: %w", ErrKey, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("%w: %w", ErrKey, err)
	}
	return f.Close()
}

// LoadKeyFile reads a private signer key ("PRIVATE+KEY+…") from path.
func LoadKeyFile(path string) (*Key, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	signer, err := note.NewSigner(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a signed-note private key", ErrKey, path)
	}
	vkey, err := publicKeyOf(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, err
	}
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	return &Key{Signer: signer, Verifier: verifier, PublicKey: vkey}, nil
}

// publicKeyOf derives the verifier key from a signed-note private key
// "PRIVATE+KEY+<name>+<hash>+<base64(0x01 ‖ seed)>".
func publicKeyOf(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 || parts[0] != "PRIVATE" || parts[1] != "KEY" {
		return "", fmt.Errorf("%w: not a private key", ErrKey)
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return "", fmt.Errorf("%w: not an Ed25519 private key", ErrKey)
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	return note.NewEd25519VerifierKey(parts[2], pub)
}
