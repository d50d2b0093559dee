package archive

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
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

// ProductionManifest reads every file under dir and returns its Manifest.
func ProductionManifest(ctx context.Context, dir string) (Manifest, error) {
	var m Manifest
	outer := sha256.New()
	err := walkFiles(ctx, dir, func(name string, f fs.File, info fs.FileInfo) error {
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

// WriteProductionZip streams every file under dir to w as a ZIP archive, in the
// manifest's order, paths relative to dir. Entries are stored uncompressed and read one
// buffer at a time: nothing is copied to a temporary file and memory stays small
// whatever the production's size. It returns the bytes written.
func WriteProductionZip(ctx context.Context, dir string, w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	zw := zip.NewWriter(cw)
	err := walkFiles(ctx, dir, func(name string, f fs.File, info fs.FileInfo) error {
		hdr := &zip.FileHeader{Name: name, Method: zip.Store, Modified: info.ModTime().UTC()}
		hdr.SetMode(0o644)
		entry, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := io.Copy(entry, f); err != nil {
			return fmt.Errorf("zip %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return cw.n, err
	}
	return cw.n, zw.Close()
}

// walkFiles calls fn with every regular file under dir, opened, in WalkDir order. The
// walk cannot leave dir: it goes through an os.Root.
func walkFiles(ctx context.Context, dir string, fn func(name string, f fs.File, info fs.FileInfo) error) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open production: %w", err)
	}
	defer root.Close()
	fsys := root.FS()
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := fsys.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		return fn(name, f, info)
	})
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
