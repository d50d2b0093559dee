package extract

import (
	"bytes"
	"cmp"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// pdfMaxDepth bounds nesting followed through a PDF: page tree levels, form XObjects
// inside forms, chains of references.
const pdfMaxDepth = 32

// pdfConfig is pdfcpu's reading configuration, built here rather than by
// model.NewDefaultConfiguration, which would write a configuration folder in the home
// directory. Streams and their decoding are bounded by lim.
func pdfConfig(lim Limits) *model.Configuration {
	limits := model.DefaultResourceLimits()
	limits.MaxStreamBytes = lim.MaxInput
	limits.MaxDecodeBytes = lim.MaxUnzip
	limits.MaxRecursionDepth = pdfMaxDepth * 2
	return &model.Configuration{
		Reader15:                  true,
		ValidationMode:            model.ValidationRelaxed,
		UnsupportedResourcePolicy: model.UnsupportedResourceSkip,
		Cmd:                       model.EXTRACTCONTENT,
		Limits:                    limits,
	}
}

// pdfDoc is an open PDF: where its objects come from (pdfcpu's cross-reference table, with
// decryption and object streams, or the lazy reader) and the fonts read so far, by object
// number.
type pdfDoc struct {
	xref    *model.XRefTable // pdfcpu's table, or
	lazy    *lazyPDF         // the objects read when asked for
	r       *run
	fonts   map[int]*pdfFont
	objStms map[int]bool // object streams counted against the budget
	stop    error        // errUnzipLimit once an object stream would pass it
}

// readPDF reads the text of each page in order, the file's objects read as the pages need
// them (lazyPDF) or, when that reader leaves the structure to pdfcpu, by pdfcpu's reader;
// the content streams by our own interpreter (pdfText).
func readPDF(ctx context.Context, r *run, data []byte) error {
	if err, ok := readPDFLazy(ctx, r, data); ok {
		return err
	}
	r.out, r.unzip = newTextOut(r.lim.MaxText), 0 // pdfcpu reads it again
	return readPDFEager(ctx, r, data)
}

// readPDFEager reads the text with pdfcpu's reader, which parses every object first and
// repairs what it can.
func readPDFEager(ctx context.Context, r *run, data []byte) error {
	pc, err := pdfcpu.ReadWithContext(ctx, bytes.NewReader(data), pdfConfig(r.lim))
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, pdfcpu.ErrWrongPassword):
		return fmt.Errorf("PDF %w", errEncrypted)
	case err != nil:
		return pdfDamage(err)
	}
	d := newPDFDoc(r)
	d.xref = pc.XRefTable
	return d.pages(ctx)
}

func newPDFDoc(r *run) *pdfDoc {
	return &pdfDoc{r: r, fonts: map[int]*pdfFont{}, objStms: map[int]bool{}}
}

// readPDFLazy reads the text with lazyPDF; ok is false when the file's structure was left
// to pdfcpu (errLazy, or a panic of the lazy reader).
func readPDFLazy(ctx context.Context, r *run, data []byte) (err error, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			err, ok = nil, false
		}
	}()
	return readPDFLazyUnprotected(ctx, r, data)
}

// readPDFLazyUnprotected is readPDFLazy with its panics left to the caller (the tests).
func readPDFLazyUnprotected(ctx context.Context, r *run, data []byte) (err error, ok bool) {
	d := newPDFDoc(r)
	if d.lazy, err = openLazyPDF(data, d); err != nil {
		return nil, false
	}
	err = d.pages(ctx)
	if d.lazy.broken {
		return nil, false
	}
	return err, true
}

// pdfDamage turns pdfcpu's error into a note: encryption it cannot open, else damage.
func pdfDamage(err error) error {
	if errors.Is(err, pdfcpu.ErrUnsupportedEncryptionFeature) || errors.Is(err, pdfcpu.ErrEncrypted) {
		return fmt.Errorf("PDF %w", errEncrypted)
	}
	if errors.Is(err, filter.ErrDecodeLimitExceeded) {
		return errUnzipLimit
	}
	return damaged("PDF %v", err)
}

// pages walks the page tree depth first, once per node (a tree with cycles or shared
// kids is read as a tree), inheriting Resources, and reads each page.
func (d *pdfDoc) pages(ctx context.Context) error {
	var cat types.Dict
	var err error
	if d.lazy != nil {
		cat, err = d.lazy.catalog()
	} else {
		cat, err = d.xref.Catalog()
	}
	if err != nil {
		return damaged("PDF catalog: %v", err)
	}
	type node struct {
		obj   types.Object
		res   types.Dict
		depth int
	}
	stack := []node{{obj: cat["Pages"]}}
	seen := map[int]bool{}
	var first error
	for len(stack) > 0 {
		if err := cmp.Or(ctx.Err(), d.stop); err != nil {
			return err
		}
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if ir, ok := n.obj.(types.IndirectRef); ok {
			if seen[ir.ObjectNumber.Value()] {
				continue
			}
			seen[ir.ObjectNumber.Value()] = true
		}
		dict := d.dict(n.obj)
		if dict == nil {
			continue
		}
		res := n.res
		if own := d.dict(dict["Resources"]); own != nil {
			res = own
		}
		kids := d.array(dict["Kids"])
		if kids == nil || dict.Type() != nil && *dict.Type() == "Page" {
			err := d.page(ctx, dict, res)
			if err != nil && !isDamage(err) {
				return err
			}
			first = cmp.Or(first, err)
			d.r.out.sep('\n')
			continue
		}
		if n.depth >= pdfMaxDepth {
			first = cmp.Or(first, damaged("PDF page tree deeper than %d", pdfMaxDepth))
			continue
		}
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, node{obj: kids[i], res: res, depth: n.depth + 1})
		}
	}
	return cmp.Or(d.stop, first)
}

// page reads the text of one page's content streams.
func (d *pdfDoc) page(ctx context.Context, page, res types.Dict) error {
	content, err := d.contents(page["Contents"])
	if len(content) > 0 {
		if terr := d.runContent(ctx, content, res, 0); terr != nil {
			return terr
		}
	}
	return err
}

// contents returns a page's content: one stream or an array of streams, joined.
func (d *pdfDoc) contents(o types.Object) ([]byte, error) {
	o = d.resolve(o)
	arr, ok := o.(types.Array)
	if !ok {
		arr = types.Array{o}
	}
	var all []byte
	var first error
	for _, s := range arr {
		b, err := d.stream(s)
		all = append(append(all, b...), '\n')
		if err != nil && !isDamage(err) {
			return all, err
		}
		first = cmp.Or(first, err)
	}
	return all, first
}

// stream returns the decoded bytes of a stream object, counted against the run's
// decompression budget (past it, the bytes within it and errUnzipLimit). A sole FlateDecode is inflated here so that a damaged stream
// keeps what was inflated before the damage; other filters are pdfcpu's.
func (d *pdfDoc) stream(o types.Object) ([]byte, error) {
	sd, ok := d.resolve(o).(types.StreamDict)
	if !ok {
		return nil, nil
	}
	return d.decode(sd)
}

// decode returns the decoded bytes of a stream, within the budget.
func (d *pdfDoc) decode(sd types.StreamDict) ([]byte, error) {
	left := d.r.unzipLeft()
	if left == 0 {
		return nil, errUnzipLimit
	}
	var b []byte
	var err error
	if len(sd.FilterPipeline) == 1 && sd.FilterPipeline[0].Name == filter.Flate && sd.FilterPipeline[0].DecodeParms == nil {
		b, err = inflate(sd.Raw, left)
	} else {
		err = sd.DecodeWithLimit(left)
		b = sd.Content
		if err != nil {
			err = pdfDamage(err)
		}
	}
	d.r.unzip += int64(len(b))
	return b, err
}

// inflate decompresses zlib data up to limit bytes: past it, the first limit bytes and
// errUnzipLimit; a damaged stream returns what was inflated before the damage.
func inflate(raw []byte, limit int64) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, damaged("PDF stream: %v", err)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(zr, limit+1))
	switch {
	case n > limit:
		return buf.Bytes()[:limit], errUnzipLimit
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		return buf.Bytes(), damaged("PDF stream: %v", err)
	}
	return buf.Bytes(), nil // a stream cut before its checksum is read as far as it goes
}

// resolve follows indirect references, a few at most. An object in an object stream
// not yet decoded costs the stream's decoded size (pdfcpu decodes it whole, lazily, and
// keeps it): measured here first, it is not resolved past the budget.
func (d *pdfDoc) resolve(o types.Object) types.Object {
	for range pdfMaxDepth {
		ir, ok := o.(types.IndirectRef)
		if !ok {
			return o
		}
		if d.lazy != nil {
			o = d.lazy.object(ir.ObjectNumber.Value())
			continue
		}
		if !d.affordObjStm(ir) {
			return nil
		}
		var err error
		if o, err = d.xref.Dereference(o); err != nil {
			return nil
		}
	}
	return nil
}

func (d *pdfDoc) dict(o types.Object) types.Dict {
	switch v := d.resolve(o).(type) {
	case types.Dict:
		return v
	case types.StreamDict:
		return v.Dict
	}
	return nil
}

func (d *pdfDoc) array(o types.Object) types.Array {
	a, _ := d.resolve(o).(types.Array)
	return a
}

func (d *pdfDoc) name(o types.Object) string {
	n, _ := d.resolve(o).(types.Name)
	return string(n)
}

func (d *pdfDoc) number(o types.Object) (float64, bool) {
	switch v := d.resolve(o).(type) {
	case types.Integer:
		return float64(v), true
	case types.Float:
		return float64(v), true
	}
	return 0, false
}

// affordObjStm counts, the first time one of its objects is resolved, the decoded size of
// the object stream holding ir against the budget, and reports whether it fits.
func (d *pdfDoc) affordObjStm(ir types.IndirectRef) bool {
	e, ok := d.xref.FindTableEntryLight(ir.ObjectNumber.Value())
	if !ok || e.ObjectStream == nil {
		return true
	}
	if _, lazy := e.Object.(types.LazyObjectStreamObject); !lazy || d.objStms[*e.ObjectStream] {
		return true
	}
	d.objStms[*e.ObjectStream] = true
	se, ok := d.xref.FindTableEntryLight(*e.ObjectStream)
	if !ok {
		return true
	}
	osd, ok := se.Object.(types.ObjectStreamDict)
	if !ok {
		return true
	}
	osd.Content = nil // measure on this copy; pdfcpu decodes its own
	if _, err := d.decode(osd.StreamDict); errors.Is(err, errUnzipLimit) {
		d.stop = errUnzipLimit
		return false
	}
	return true
}
