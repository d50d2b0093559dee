package archive

import (
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/klauspost/compress/zstd"
)

// Streaming reads of a sealed file. GCM authenticates a file only once all of it is read,
// so a stream cannot check the tag before it gives out bytes. It decrypts the ciphertext
// with the counter mode under GCM instead (the same key stream: the counter block is the
// nonce followed by the 32-bit block counter, starting at 2), decompresses on the fly,
// and checks the SHA-256 of the original bytes against the recorded digest at the end.
// That check is what makes a stream safe to serve: a changed, truncated or foreign file
// cannot give the original's digest. Readers of the archive run it twice: once to the
// digest before anything is served, then again to the client.

// gcmTagSize is the size of the GCM tag at the end of a sealed file.
const gcmTagSize = 16

// streamWindow is the most memory one stream holds besides its read buffers: the zstd
// history, at most the encoder's window (8 MiB at any level the archive uses; a message
// no larger than its window is one segment of its own size), twice over for the decoder's
// block buffers.
const streamWindow = 16 << 20

// openStream returns a reader of the original bytes of the sealed file in file (of size
// bytes). Its Read returns ErrIntegrity once the bytes read do not decompress, or their
// SHA-256 is not digest at the end; Close releases the decoder. The tenant, bound by the
// GCM tag only, is not checked: another message's file cannot give digest.
func (k *Keyring) openStream(file io.Reader, size int64, digest [32]byte) (*plainStream, error) {
	head := make([]byte, len(magic)+2)
	if _, err := io.ReadFull(file, head); err != nil {
		return nil, fmt.Errorf("%w: not a sealed message file", ErrIntegrity)
	}
	idBuf := make([]byte, int(head[len(magic)+1]))
	if _, err := io.ReadFull(file, idBuf); err != nil {
		return nil, fmt.Errorf("%w: header truncated", ErrIntegrity)
	}
	id, _, err := parseHeader(append(head, idBuf...))
	if err != nil {
		return nil, err
	}
	block, ok := k.blocks[id]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKey, id)
	}
	nonce := make([]byte, 12)
	ctLen := size - int64(len(head)+len(idBuf)+len(nonce)+gcmTagSize)
	if _, err := io.ReadFull(file, nonce); err != nil || ctLen < 0 {
		return nil, fmt.Errorf("%w: file truncated", ErrIntegrity)
	}
	if ctLen > (1<<32-2)*16 {
		return nil, fmt.Errorf("%w: file larger than GCM allows", ErrIntegrity)
	}
	iv := binary.BigEndian.AppendUint32(append([]byte{}, nonce...), 2)
	plain := cipher.StreamReader{S: cipher.NewCTR(block, iv), R: io.LimitReader(file, ctLen)}
	dec, err := zstd.NewReader(plain, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(streamWindow/2))
	if err != nil {
		return nil, fmt.Errorf("%w: decompress: %w", ErrIntegrity, err)
	}
	return &plainStream{dec: dec, sum: sha256.New(), digest: digest}, nil
}

// plainStream is the decompressed original of a sealed file, checked against its digest
// when it ends.
type plainStream struct {
	dec    *zstd.Decoder
	sum    hash.Hash
	digest [32]byte
	err    error
}

func (p *plainStream) Read(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.dec.Read(b)
	p.sum.Write(b[:n])
	switch {
	case errors.Is(err, io.EOF):
		if [32]byte(p.sum.Sum(nil)) != p.digest {
			p.err = fmt.Errorf("%w: SHA-256 differs from the recorded digest", ErrIntegrity)
			return n, p.err
		}
		p.err = io.EOF
	case err != nil:
		p.err = fmt.Errorf("%w: decompress: %w", ErrIntegrity, err)
	}
	return n, p.err
}

// Close releases the decoder.
func (p *plainStream) Close() error {
	p.dec.Close()
	return nil
}
