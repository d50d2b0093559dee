package production

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
)

// Manifest sums up the files of a production so that it can later be proven unchanged.
type Manifest struct {
	// Hash is the SHA-256 (hex) of one line "<sha256 hex>  <path>\n" per file (the
	// format of sha256sum), the files taken in the order of a depth-first walk that
	// visits each folder's entries sorted by name (io/fs.WalkDir), paths relative to the
	// job directory with "/".
	Hash  string
	Files int
	Size  int64 // bytes of all files
}

// ReadManifest reads every file of a job's directory and returns its Manifest.
// Symbolic links are not part of a production: they are neither followed nor counted,
// and one at the job directory (or above it, below DIR_EXPORT) is ErrLinkRefused.
func ReadManifest(ctx context.Context, root, tenant, jobID string) (Manifest, error) {
	var m Manifest
	outer := sha256.New()
	err := walkFiles(ctx, root, tenant, jobID, func(name string, f fs.File, info fs.FileInfo) error {
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return fmt.Errorf("hash %s: %w", name, err)
		}
		fmt.Fprintf(outer, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), name)
		m.Files++
		m.Size += info.Size()
		return nil
	})
	if err != nil {
		return Manifest{}, err
	}
	m.Hash = hex.EncodeToString(outer.Sum(nil))
	return m, nil
}

// Manifest is the Manifest of a closed production, made from what its writers hashed as
// they wrote: the same value as ReadManifest of the job directory, without reading
// the production back.
func (p *Writer) Manifest() Manifest {
	files := slices.Clone(p.written)
	slices.SortFunc(files, func(a, b writtenFile) int { return compareWalkOrder(a.path, b.path) })
	m := Manifest{Files: len(files)}
	outer := sha256.New()
	for _, f := range files {
		fmt.Fprintf(outer, "%s  %s\n", hex.EncodeToString(f.sum[:]), f.path)
		m.Size += f.size
	}
	m.Hash = hex.EncodeToString(outer.Sum(nil))
	return m
}

// compareWalkOrder orders slash-separated paths as io/fs.WalkDir visits them: component by
// component, each folder's entries sorted by name.
func compareWalkOrder(a, b string) int {
	for {
		ca, restA, moreA := strings.Cut(a, "/")
		cb, restB, moreB := strings.Cut(b, "/")
		if c := strings.Compare(ca, cb); c != 0 {
			return c
		}
		if !moreA || !moreB {
			return cmp.Compare(boolInt(moreA), boolInt(moreB))
		}
		a, b = restA, restB
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
