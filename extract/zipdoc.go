package extract

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxZipEntries bounds the entries of a document's zip: an office document has tens or
// hundreds; the bound keeps the directory's memory small whatever the input.
const maxZipEntries = 20000

// sniffZip returns the kind of a zip by its entries: an OpenDocument mimetype entry, or
// the top folder of an Office Open XML package beside its [Content_Types].xml. A zip
// whose directory is unreadable is the hint's kind when the hint is a zip-based kind
// (a truncated download of a .docx), else no document.
func sniffZip(data []byte, hint string) string {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if isOOXML(hint) || isODF(hint) {
			return hint
		}
		return ""
	}
	names := map[string]*zip.File{}
	for _, f := range zr.File[:min(len(zr.File), maxZipEntries)] {
		names[f.Name] = f
	}
	if f := names["mimetype"]; f != nil {
		if k := odfKinds[strings.TrimSpace(string(readSmall(f, 128)))]; k != "" {
			return k
		}
	}
	if names["[Content_Types].xml"] != nil {
		for _, k := range []string{KindDOCX, KindXLSX, KindPPTX} {
			if names[ooxmlMainParts[k]] != nil || hint == k {
				return k
			}
		}
	}
	if names["content.xml"] != nil {
		if isODF(hint) {
			return hint
		}
		return KindODT
	}
	return ""
}

// odfKinds maps an OpenDocument mimetype (documents and templates) to its kind.
var odfKinds = map[string]string{
	"application/vnd.oasis.opendocument.text":                  KindODT,
	"application/vnd.oasis.opendocument.text-template":         KindODT,
	"application/vnd.oasis.opendocument.spreadsheet":           KindODS,
	"application/vnd.oasis.opendocument.spreadsheet-template":  KindODS,
	"application/vnd.oasis.opendocument.presentation":          KindODP,
	"application/vnd.oasis.opendocument.presentation-template": KindODP,
}

func isODF(kind string) bool { return kind == KindODT || kind == KindODS || kind == KindODP }

// readSmall returns at most n bytes of a zip entry, nil on any error.
func readSmall(f *zip.File, n int64) []byte {
	rc, err := f.Open()
	if err != nil {
		return nil
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, n))
	return b
}

// zipDoc is an open zip-based document whose entries are read within the run's
// decompression budget.
type zipDoc struct {
	files map[string]*zip.File
	names []string // in the zip's order
}

// openZip opens data as a zip; an encrypted Office file (an OLE compound file) or an
// unreadable directory is an error for the note.
func openZip(data []byte) (*zipDoc, error) {
	if bytes.HasPrefix(data, []byte("\xd0\xcf\x11\xe0")) {
		return nil, fmt.Errorf("document %w", errEncrypted)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, damaged("zip directory unreadable (%v)", err)
	}
	if len(zr.File) > maxZipEntries {
		return nil, damaged("zip of %d entries", len(zr.File))
	}
	d := &zipDoc{files: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		if _, dup := d.files[f.Name]; !dup {
			d.files[f.Name] = f
			d.names = append(d.names, f.Name)
		}
	}
	return d, nil
}

// open returns a reader of the entry name that counts what it inflates against the
// run's budget and stops when the context ends. A missing entry is an error.
func (d *zipDoc) open(ctx context.Context, r *run, name string) (io.ReadCloser, error) {
	f := d.files[name]
	if f == nil {
		return nil, damaged("part %s missing", name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, damaged("part %s: %v", name, err)
	}
	return &budgetReader{ctx: ctx, r: r, rc: rc, name: name}, nil
}

// budgetReader reads a zip entry within the run's decompression budget.
type budgetReader struct {
	ctx  context.Context
	r    *run
	rc   io.ReadCloser
	name string
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	left := b.r.unzipLeft()
	if left == 0 { // the budget is spent: one byte more is past it
		if n, _ := b.rc.Read(make([]byte, 1)); n > 0 {
			return 0, errUnzipLimit
		}
	}
	n, err := b.rc.Read(p[:min(int64(len(p)), max(left, 1))])
	b.r.unzip += int64(n)
	if b.r.unzip > b.r.lim.MaxUnzip {
		return 0, errUnzipLimit
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = damaged("part %s: %v", b.name, err)
	}
	return n, err
}

func (b *budgetReader) Close() error { return b.rc.Close() }

// readParts reads each named part with read, in order. A damaged part does not stop the
// others; the first damage is returned at the end. Limits and the context stop at once.
func (d *zipDoc) readParts(ctx context.Context, r *run, names []string, read func(io.Reader) error) error {
	var first error
	for _, name := range names {
		rc, err := d.open(ctx, r, name)
		if err == nil {
			err = read(rc)
			rc.Close()
		}
		var dmg *errDamaged
		switch {
		case err == nil:
		case errors.As(err, &dmg):
			first = cmp.Or(first, err)
		default:
			return err
		}
		r.out.sep('\n')
	}
	return first
}
