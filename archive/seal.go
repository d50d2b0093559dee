package archive

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/klauspost/compress/zstd"

	"github.com/mailledger/mailledger/domain/fault"
)

// A sealed message file is:
//
//	"MLM1"          4 bytes, magic
//	version         1 byte (1)
//	key id length   1 byte, then the key id (ASCII)
//	nonce           12 bytes, fresh per file
//	ciphertext      AES-256-GCM of zstd(original bytes), tag appended
//
// The GCM additional data is the header above followed by the tenant and the SHA-256 of
// the original bytes, so a file copied over another message's name fails its tag check.

var magic = []byte("MLM1")

const formatVersion = 1

// ErrIntegrity means a stored message failed its GCM tag or digest check: it was changed,
// truncated, or belongs to another message. Never serve such a message.
var ErrIntegrity = fault.New(fault.Integrity, "integrity error")

// ErrUnknownKey means a file was sealed with a key id the keyring does not have.
var ErrUnknownKey = fault.New(fault.Integrity, "unknown archive key")

// The encoder keeps one state per processor, so that the importer's workers compress at
// the same time (with one state, EncodeAll calls wait for each other).
var (
	zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(1<<30))
)

// Seal compresses and encrypts raw with the keyring's current key.
func (k *Keyring) Seal(tenant string, raw []byte) ([]byte, error) {
	return k.sealDigest(tenant, raw, sha256.Sum256(raw))
}

// sealDigest is Seal for a caller that has already hashed raw (the parser does): digest
// must be the SHA-256 of raw.
func (k *Keyring) sealDigest(tenant string, raw []byte, digest [32]byte) ([]byte, error) {
	id, aead := k.current()
	header := sealHeader(id)
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	// One buffer for the whole file, sized for the largest zstd frame of raw: the frame
	// is appended after the header and the nonce and then encrypted in place (GCM allows
	// the ciphertext to overwrite its plaintext exactly), so nothing is grown or copied
	// on the way (growing the frame's buffer was a tenth of sealing's CPU).
	prefix := len(header) + len(nonce)
	out := make([]byte, prefix, prefix+zstdEncoder.MaxEncodedSize(len(raw))+aead.Overhead())
	copy(out[copy(out, header):], nonce)
	compressed := zstdEncoder.EncodeAll(raw, out[prefix:prefix])
	return aead.Seal(out[:prefix], nonce, compressed, additionalData(header, tenant, digest)), nil
}

// Open decrypts and decompresses a sealed file and checks that its SHA-256 equals digest.
func (k *Keyring) Open(tenant string, sealed []byte, digest [32]byte) ([]byte, error) {
	id, rest, err := parseHeader(sealed)
	if err != nil {
		return nil, err
	}
	aead, ok := k.byID(id)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKey, id)
	}
	header := sealed[:len(sealed)-len(rest)]
	if len(rest) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("%w: file truncated", ErrIntegrity)
	}
	nonce, ct := rest[:aead.NonceSize()], rest[aead.NonceSize():]
	compressed, err := aead.Open(nil, nonce, ct, additionalData(header, tenant, digest))
	if err != nil {
		return nil, fmt.Errorf("%w: authentication tag mismatch (changed file, wrong key or another message's file)", ErrIntegrity)
	}
	raw, err := zstdDecoder.DecodeAll(compressed, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: decompress: %w", ErrIntegrity, err)
	}
	if sha256.Sum256(raw) != digest {
		return nil, fmt.Errorf("%w: SHA-256 differs from the recorded digest", ErrIntegrity)
	}
	return raw, nil
}

func sealHeader(keyID string) []byte {
	h := make([]byte, 0, len(magic)+2+len(keyID))
	h = append(h, magic...)
	h = append(h, formatVersion, byte(len(keyID)))
	return append(h, keyID...)
}

func parseHeader(b []byte) (keyID string, rest []byte, err error) {
	if len(b) < len(magic)+2 || !bytes.Equal(b[:len(magic)], magic) {
		return "", nil, fmt.Errorf("%w: not a sealed message file", ErrIntegrity)
	}
	if b[len(magic)] != formatVersion {
		return "", nil, fmt.Errorf("%w: unknown format version %d", ErrIntegrity, b[len(magic)])
	}
	n := int(b[len(magic)+1])
	start := len(magic) + 2
	if len(b) < start+n {
		return "", nil, fmt.Errorf("%w: header truncated", ErrIntegrity)
	}
	return string(b[start : start+n]), b[start+n:], nil
}

func additionalData(header []byte, tenant string, digest [32]byte) []byte {
	ad := make([]byte, 0, len(header)+4+len(tenant)+32)
	ad = append(ad, header...)
	ad = binary.BigEndian.AppendUint32(ad, uint32(len(tenant)))
	ad = append(ad, tenant...)
	return append(ad, digest[:]...)
}
