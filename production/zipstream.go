package production

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// WriteZip streams every file of a job's directory to w as a ZIP archive, in
// the manifest's order, paths relative to the job directory. Entries are stored
// uncompressed and read one buffer at a time: nothing is copied to a temporary file and
// memory stays small whatever the production's size. Symbolic links are left out, never
// followed, as ReadManifest says. It returns the bytes written.
func WriteZip(ctx context.Context, root, tenant, jobID string, w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	zw := zip.NewWriter(cw)
	err := walkFiles(ctx, root, tenant, jobID, func(name string, f fs.File, info fs.FileInfo) error {
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

// walkFiles calls fn with every regular file of a job's directory, opened, in WalkDir
// order (each folder's entries sorted by name, a folder's files before the next entry).
// Every folder and file is opened beneath the job directory's descriptor through no
// link; links are skipped.
func walkFiles(ctx context.Context, root, tenant, jobID string, fn func(name string, f fs.File, info fs.FileInfo) error) error {
	dir, err := openJobDir(root, tenant, jobID)
	if err != nil {
		return fmt.Errorf("open production: %w", err)
	}
	defer dir.Close()
	return walkDir(ctx, dir, "", fn)
}

func walkDir(ctx context.Context, dir *os.File, prefix string, fn func(name string, f fs.File, info fs.FileInfo) error) error {
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return fmt.Errorf("read %s: %w", dir.Name(), err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := prefix + e.Name()
		switch {
		case e.IsDir():
			sub, err := openDir(dir, e.Name())
			if err != nil {
				return err
			}
			err = walkDir(ctx, sub, name+"/", fn)
			if err = errors.Join(err, sub.Close()); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if err := walkFile(dir, e.Name(), name, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

func walkFile(dir *os.File, base, name string, fn func(name string, f fs.File, info fs.FileInfo) error) error {
	f, err := openFile(dir, base)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	return fn(name, f, info)
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
