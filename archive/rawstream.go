package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// blobOpener is a BlobStore that can also open a file for reading as a stream.
type blobOpener interface {
	Open(ctx context.Context, key string) (io.ReadCloser, int64, error)
}

// Open opens the file under key for reading, with its size.
func (s *LocalStore) Open(_ context.Context, key string) (io.ReadCloser, int64, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%w: %s", ErrBlobNotFound, key)
	}
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, info.Size(), nil
}

// RawReader is the original bytes of one message, read as a stream and checked against
// the message's digest at the end: a Read returns ErrIntegrity there if they differ.
// Close it when done.
type RawReader struct {
	// Size is the number of original bytes.
	Size   int64
	stream *plainStream
	file   io.Closer
}

func (r *RawReader) Read(b []byte) (int, error) { return r.stream.Read(b) }

// Close releases the file and the decoder.
func (r *RawReader) Close() error {
	r.stream.Close()
	return r.file.Close()
}

// StreamMemory is the most memory a RawReader holds, whatever the message's size.
const StreamMemory = streamWindow

// OpenRawFor checks the file of a visible message (see GetFor) against its digest,
// reading it through once without keeping it, then opens it again to be read. Its memory
// stays under StreamMemory for any size, so a client that reads slowly holds no copy of the
// message. A file that fails the check is ErrIntegrity before any byte is given out; the
// second read checks again at its end, in case the file changed in between.
func (a *Archive) OpenRawFor(ctx context.Context, tenant string, id int64, participant string) (*RawReader, error) {
	m, err := a.GetFor(ctx, tenant, id, participant)
	if err != nil {
		return nil, err
	}
	r, err := a.openRaw(ctx, m)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, r)
	r.Close()
	if err != nil {
		return nil, fmt.Errorf("message %d: %w", m.ID, err)
	}
	return a.openRaw(ctx, m)
}

func (a *Archive) openRaw(ctx context.Context, m *Message) (*RawReader, error) {
	digest, err := parseDigest(m.Digest)
	if err != nil {
		return nil, fmt.Errorf("%w: stored digest: %w", ErrIntegrity, err)
	}
	file, size, err := a.openBlob(ctx, MessageKey(m.TenantID, m.ID))
	if errors.Is(err, ErrBlobNotFound) {
		return nil, fmt.Errorf("%w: message %d has no file", ErrIntegrity, m.ID)
	}
	if err != nil {
		return nil, err
	}
	stream, err := a.keys.openStream(file, size, digest)
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("message %d: %w", m.ID, err)
	}
	return &RawReader{Size: m.Size, stream: stream, file: file}, nil
}

// openBlob opens a stored file as a stream, or reads it whole from a store that cannot.
func (a *Archive) openBlob(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if o, ok := a.blobs.(blobOpener); ok {
		return o.Open(ctx, key)
	}
	b, err := a.blobs.Get(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
}
