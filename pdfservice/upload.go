package pdfservice

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
)

// maxMemory is how much of a multipart form is held in memory; the rest goes to files.
const maxMemory = 4 << 20

// saveUploads writes the files of the "files" field into dir, flat, by base name, as
// Gotenberg does, and requires one named index.html. A name is its base name only, so no
// upload can write outside dir.
func saveUploads(r *http.Request, dir string) error {
	if err := r.ParseMultipartForm(maxMemory); err != nil {
		return fmt.Errorf("bad multipart form: %v", err)
	}
	defer r.MultipartForm.RemoveAll()
	found := false
	for _, fh := range r.MultipartForm.File["files"] {
		name := filepath.Base(filepath.Clean("/" + fh.Filename))
		if name == "/" || name == "." || name == ".." {
			return fmt.Errorf("bad file name %q", fh.Filename)
		}
		found = found || name == "index.html"
		if err := saveUpload(fh, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	if !found {
		return errors.New("form file 'index.html' is required")
	}
	return nil
}

func saveUpload(fh *multipart.FileHeader, path string) error {
	src, err := fh.Open()
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
