package archive

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Keyring holds the AES-256 keys of the message store. Files name the key that sealed
// them, so a new key can be added (rotation) while old files stay readable. Keys live in
// $MAILLEDGER_DATA_DIR/keys/archive-<id>.key (0600, 64 hex characters); the current key
// is the one named in archive.current.
type Keyring struct {
	currentID string
	keys      map[string]cipher.AEAD
	blocks    map[string]cipher.Block // the AES ciphers under keys' GCM, for streaming reads
}

const currentKeyFile = "archive.current"

// ErrKeyring means the archive keys could not be read or are malformed.
var ErrKeyring = errors.New("archive keyring")

// LoadOrCreateKeyring reads the keys under dir, creating the first key on first start.
func LoadOrCreateKeyring(dir string) (*Keyring, error) {
	if _, err := os.Stat(filepath.Join(dir, currentKeyFile)); errors.Is(err, os.ErrNotExist) {
		if _, err := RotateKey(dir); err != nil {
			return nil, err
		}
	}
	return LoadKeyring(dir)
}

// RotateKey creates a new key under dir and makes it current; it returns the key id.
func RotateKey(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("%w: %w", ErrKeyring, err)
	}
	var idBytes [4]byte
	key := make([]byte, 32)
	if _, err := rand.Read(idBytes[:]); err != nil {
		return "", err
	}
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	id := hex.EncodeToString(idBytes[:])
	if err := writeSecret(filepath.Join(dir, "archive-"+id+".key"), hex.EncodeToString(key)+"\n"); err != nil {
		return "", err
	}
	return id, writeSecret(filepath.Join(dir, currentKeyFile), id+"\n")
}

func writeSecret(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return fmt.Errorf("%w: %w", ErrKeyring, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%w: %w", ErrKeyring, err)
	}
	return nil
}

// LoadKeyring reads every archive key under dir.
func LoadKeyring(dir string) (*Keyring, error) {
	cur, err := os.ReadFile(filepath.Join(dir, currentKeyFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeyring, err)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "archive-*.key"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	k := &Keyring{currentID: strings.TrimSpace(string(cur)), keys: map[string]cipher.AEAD{}, blocks: map[string]cipher.Block{}}
	for _, p := range paths {
		if err := k.addFile(p); err != nil {
			return nil, err
		}
	}
	if _, ok := k.keys[k.currentID]; !ok {
		return nil, fmt.Errorf("%w: current key %q has no key file", ErrKeyring, k.currentID)
	}
	return k, nil
}

func (k *Keyring) addFile(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKeyring, err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) != 32 {
		return fmt.Errorf("%w: %s is not a 256-bit hex key", ErrKeyring, filepath.Base(path))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return err
	}
	id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "archive-"), ".key")
	k.keys[id], k.blocks[id] = aead, block
	return nil
}

func (k *Keyring) current() (string, cipher.AEAD) { return k.currentID, k.keys[k.currentID] }

func (k *Keyring) byID(id string) (cipher.AEAD, bool) {
	a, ok := k.keys[id]
	return a, ok
}

// CurrentID names the key new files are sealed with.
func (k *Keyring) CurrentID() string { return k.currentID }
