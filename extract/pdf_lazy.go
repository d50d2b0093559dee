package extract

import (
	"bytes"
	"context"
	"errors"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// errLazy says the lazy reader met a file structure it does not read (a damaged
// cross-reference, an object not where the table says, encryption): the file is then read
// again by pdfcpu, which repairs what it can.
var errLazy = errors.New("PDF structure left to pdfcpu")

// lazyPDF reads a PDF's objects when the page walk asks for them: the cross-reference
// sections (tables and streams, following Prev) first, then each object the first time it
// is resolved. pdfcpu's reader parses every object of the file before the first page,
// images and embedded fonts included: three of the corpus's PDFs took 10 to 20 ms each,
// half of the whole corpus's parse (docs/performance.md, "Import throughput"). Objects are
// parsed by pdfcpu's object parser, so the walk sees the same values either way; anything
// this reader does not understand is errLazy, never a guess.
type lazyPDF struct {
	data    []byte
	entries map[int]xrefEntry
	root    types.Object
	objs    map[int]types.Object
	stms    map[int]*objStream
	doc     *pdfDoc // the decompression budget
	depth   int     // nested object reads (a Length or DecodeParms by reference)
	broken  bool    // errLazy was met: the walk's text is dropped
	// noEndobj and noStream are where a search to the end found no such keyword (index).
	noEndobj, noStream int
}

// xrefEntry is where an object is: at offset in the file, or the idx-th object of the
// object stream stm.
type xrefEntry struct {
	offset   int
	stm, idx int
	inStream bool
}

// objStream is a decoded object stream: its objects' offsets.
type objStream struct {
	content []byte
	first   int
	offs    []int
}

// lazyMaxObject bounds the bytes of one object's text (its dictionary, not its stream):
// an object that does not parse within it is left to pdfcpu.
const lazyMaxObject = 1 << 20

// lazyMaxSections bounds the Prev chain of cross-reference sections.
const lazyMaxSections = 64

// openLazyPDF reads the cross-reference sections of data.
func openLazyPDF(data []byte, d *pdfDoc) (*lazyPDF, error) {
	l := &lazyPDF{data: data, entries: map[int]xrefEntry{}, objs: map[int]types.Object{}, stms: map[int]*objStream{}, doc: d,
		noEndobj: len(data) + 1, noStream: len(data) + 1}
	tail := data[max(0, len(data)-2048):]
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return nil, errLazy
	}
	off, _, ok := pdfInt(tail[i+len("startxref"):])
	if !ok {
		return nil, errLazy
	}
	seen := map[int]bool{}
	for range lazyMaxSections {
		if off <= 0 || off >= len(data) {
			return nil, errLazy
		}
		seen[off] = true
		trailer, err := l.section(off)
		if err != nil {
			return nil, err
		}
		if _, enc := trailer.Find("Encrypt"); enc {
			return nil, errLazy
		}
		if l.root == nil {
			l.root, _ = trailer.Find("Root")
		}
		if stm, ok := trailer["XRefStm"].(types.Integer); ok { // a hybrid file's stream
			if seen[int(stm)] {
				return nil, errLazy
			}
			seen[int(stm)] = true
			if _, err := l.section(int(stm)); err != nil {
				return nil, err
			}
		}
		prev, ok := trailer["Prev"].(types.Integer)
		if ok && seen[int(prev)] {
			ok = false // a Prev back to a section read: every section has been read
		}
		if !ok {
			if l.root == nil {
				return nil, errLazy
			}
			return l, nil
		}
		off = int(prev)
	}
	return nil, errLazy
}

// section reads the cross-reference section at off, a table or a stream, adding the
// objects not already found in a newer one, and returns its trailer.
func (l *lazyPDF) section(off int) (types.Dict, error) {
	rest := skipSpace(l.data[off:])
	if bytes.HasPrefix(rest, []byte("xref")) {
		return l.table(len(l.data) - len(rest) + len("xref"))
	}
	o, err := l.objectAt(off, -1)
	if err != nil {
		return nil, err
	}
	sd, ok := o.(types.StreamDict)
	if !ok || sd.Type() == nil || *sd.Type() != "XRef" {
		return nil, errLazy
	}
	content, err := l.doc.decode(sd)
	if err != nil {
		return nil, errLazy
	}
	return sd.Dict, l.streamEntries(sd.Dict, content)
}

// table reads a cross-reference table from p (after the keyword) and its trailer.
func (l *lazyPDF) table(p int) (types.Dict, error) {
	b := l.data
	for {
		rest := skipSpace(b[p:])
		p = len(b) - len(rest)
		if bytes.HasPrefix(rest, []byte("trailer")) {
			o, _, err := l.parse(p+len("trailer"), min(len(b), p+lazyMaxObject))
			if err != nil {
				return nil, err
			}
			d, ok := o.(types.Dict)
			if !ok {
				return nil, errLazy
			}
			return d, nil
		}
		start, n1, ok1 := pdfInt(rest)
		count, n2, ok2 := pdfInt(rest[n1:])
		if !ok1 || !ok2 || start < 0 || count < 0 || count > len(rest)/18 {
			return nil, errLazy
		}
		p += n1 + n2
		for i := range count {
			rest := skipSpace(b[p:])
			offset, n1, ok1 := pdfInt(rest)
			_, n2, ok2 := pdfInt(rest[n1:])
			kind := skipSpace(rest[n1+n2:])
			if !ok1 || !ok2 || len(kind) == 0 || kind[0] != 'n' && kind[0] != 'f' {
				return nil, errLazy
			}
			p = len(b) - len(kind) + 1
			if _, known := l.entries[start+i]; !known && kind[0] == 'n' && offset > 0 {
				l.entries[start+i] = xrefEntry{offset: offset}
			}
		}
	}
}

// streamEntries reads the rows of a cross-reference stream (its W and Index).
func (l *lazyPDF) streamEntries(d types.Dict, content []byte) error {
	w, ok := d["W"].(types.Array)
	if !ok || len(w) != 3 {
		return errLazy
	}
	var widths [3]int
	for i, o := range w {
		n, ok := o.(types.Integer)
		if !ok || n < 0 || n > 8 {
			return errLazy
		}
		widths[i] = int(n)
	}
	row := widths[0] + widths[1] + widths[2]
	if row == 0 {
		return errLazy
	}
	index, _ := d["Index"].(types.Array)
	if index == nil {
		size, ok := d["Size"].(types.Integer)
		if !ok {
			return errLazy
		}
		index = types.Array{types.Integer(0), size}
	}
	if len(index)%2 != 0 {
		return errLazy
	}
	for i := 0; i < len(index); i += 2 {
		start, ok1 := index[i].(types.Integer)
		count, ok2 := index[i+1].(types.Integer)
		if !ok1 || !ok2 || start < 0 || count < 0 {
			return errLazy
		}
		for j := range int(count) {
			if len(content) < row {
				return nil // a short stream: the rows it has
			}
			f := [3]int{1, 0, 0} // type 1 when the first field is absent
			for k := range widths {
				if widths[k] > 0 {
					f[k] = 0
				}
				for _, c := range content[:widths[k]] {
					f[k] = f[k]<<8 | int(c)
				}
				content = content[widths[k]:]
			}
			num := int(start) + j
			if _, known := l.entries[num]; known {
				continue
			}
			switch f[0] {
			case 1:
				if f[1] > 0 {
					l.entries[num] = xrefEntry{offset: f[1]}
				}
			case 2:
				l.entries[num] = xrefEntry{stm: f[1], idx: f[2], inStream: true}
			}
		}
	}
	return nil
}

func (l *lazyPDF) catalog() (types.Dict, error) {
	d, ok := l.resolve(l.root).(types.Dict)
	if !ok {
		l.broken = true
		return nil, errLazy
	}
	return d, nil
}

// resolve returns o, or the object it refers to.
func (l *lazyPDF) resolve(o types.Object) types.Object {
	if ir, ok := o.(types.IndirectRef); ok {
		return l.object(ir.ObjectNumber.Value())
	}
	return o
}

// object returns object num, nil for none; a structure it cannot read marks the file
// broken (the walk then stops and pdfcpu reads the file).
func (l *lazyPDF) object(num int) types.Object {
	if o, ok := l.objs[num]; ok {
		return o
	}
	e, ok := l.entries[num]
	if !ok || l.broken || l.doc.stop != nil {
		return nil
	}
	if l.depth >= 4 {
		l.broken = true
		return nil
	}
	l.depth++
	defer func() { l.depth-- }()
	var o types.Object
	var err error
	if e.inStream {
		o, err = l.streamObject(e)
	} else {
		o, err = l.objectAt(e.offset, num)
	}
	switch {
	case errors.Is(err, errUnzipLimit):
		l.doc.stop = errUnzipLimit
		return nil
	case err != nil:
		l.broken = true
		return nil
	}
	l.objs[num] = o
	return o
}

// objectAt parses the object whose "num g obj" is at off (any number for num < 0), with
// its stream's bytes. Another object there is a table that is off (pdfcpu repairs it).
func (l *lazyPDF) objectAt(off, num int) (types.Object, error) {
	b := l.data
	if off < 0 || off >= len(b) {
		return nil, errLazy
	}
	rest := skipSpace(b[off:])
	got, n1, ok1 := pdfInt(rest)
	_, n2, ok2 := pdfInt(rest[n1:])
	after := skipSpace(rest[n1+n2:])
	if !ok1 || !ok2 || !bytes.HasPrefix(after, []byte("obj")) || num >= 0 && got != num {
		return nil, errLazy
	}
	p := len(b) - len(after) + len("obj")
	end := len(b)
	if e := l.index(p, len(b), "endobj", &l.noEndobj); e >= 0 {
		end = e
	}
	stream := l.index(p, end, "stream", &l.noStream)
	if stream >= 0 {
		end = stream
	}
	o, objEnd, err := l.parse(p, end)
	if err != nil || stream < 0 || len(skipSpace(b[objEnd:stream])) > 0 {
		return o, err // no stream, or the keyword is a later object's (this one lacks endobj)
	}
	d, ok := o.(types.Dict)
	if !ok {
		return nil, errLazy
	}
	return l.streamAt(d, end+len("stream"))
}

// index is the position of the first word in data[from:to], or -1. *none is where a
// search to the end of the file found none: searches from there on are not repeated, so
// a file without the keyword costs one scan, not one per object.
func (l *lazyPDF) index(from, to int, word string, none *int) int {
	if from >= *none && to == len(l.data) {
		return -1
	}
	i := bytes.Index(l.data[from:to], []byte(word))
	if i < 0 {
		if to == len(l.data) {
			*none = min(*none, from)
		}
		return -1
	}
	return from + i
}

// streamAt is the stream of dict d whose keyword ends at p: its bytes, found by Length
// or, when Length does not end at endstream, by the keyword.
func (l *lazyPDF) streamAt(d types.Dict, p int) (types.Object, error) {
	b := l.data
	switch {
	case bytes.HasPrefix(b[p:], []byte("\r\n")):
		p += 2
	case bytes.HasPrefix(b[p:], []byte("\n")), bytes.HasPrefix(b[p:], []byte("\r")):
		p++
	}
	n := -1
	if v, ok := l.resolve(d["Length"]).(types.Integer); ok && int(v) >= 0 && int(v) <= len(b)-p &&
		bytes.HasPrefix(skipSpace(b[p+int(v):]), []byte("endstream")) {
		n = int(v)
	}
	if n < 0 {
		e := bytes.Index(b[p:], []byte("endstream"))
		if e < 0 {
			return nil, errLazy
		}
		n = len(bytes.TrimRight(b[p:p+e], "\r\n"))
	}
	pipeline, err := l.filters(d)
	if err != nil {
		return nil, err
	}
	length := int64(n)
	sd := types.NewStreamDict(d, int64(p), &length, nil, pipeline)
	sd.Raw = b[p : p+n : p+n]
	return sd, nil
}

// inlineFilters are the abbreviated filter names pdfcpu's relaxed reading accepts.
var inlineFilters = map[string]string{
	"AHx": filter.ASCIIHex, "A85": filter.ASCII85, "LZW": filter.LZW, "Fl": filter.Flate,
	"RL": filter.RunLength, "CCF": filter.CCITTFax, "DCT": filter.DCT,
}

// filters is a stream's filter pipeline, its names and parameters as pdfcpu reads them.
func (l *lazyPDF) filters(d types.Dict) ([]types.PDFFilter, error) {
	f, ok := d.Find("Filter")
	if !ok {
		return nil, nil
	}
	var names types.Array
	var parms types.Array
	switch v := l.resolve(f).(type) {
	case types.Name:
		names = types.Array{v}
		parms = types.Array{l.resolve(d["DecodeParms"])}
		if a, ok := parms[0].(types.Array); ok && len(a) <= 1 {
			parms = a
		}
	case types.Array:
		names = v
		parms, _ = l.resolve(d["DecodeParms"]).(types.Array)
	default:
		return nil, errLazy
	}
	var out []types.PDFFilter
	for i, o := range names {
		name, ok := o.(types.Name)
		if !ok {
			return nil, errLazy
		}
		f := types.PDFFilter{Name: string(name)}
		if canonical, ok := inlineFilters[f.Name]; ok {
			f.Name = canonical
		}
		if i < len(parms) {
			switch p := l.resolve(parms[i]).(type) {
			case types.Dict:
				if len(p) > 0 {
					f.DecodeParms = p
				}
			case nil:
			default:
				return nil, errLazy
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// streamObject parses object e.idx of the object stream e.stm, decoding the stream (within
// the budget) the first time.
func (l *lazyPDF) streamObject(e xrefEntry) (types.Object, error) {
	s, ok := l.stms[e.stm]
	if !ok {
		sd, isStream := l.object(e.stm).(types.StreamDict)
		if !isStream || l.broken {
			return nil, errLazy
		}
		content, err := l.doc.decode(sd)
		if err != nil {
			if errors.Is(err, errUnzipLimit) {
				return nil, err
			}
			return nil, errLazy
		}
		s = &objStream{content: content}
		n, ok1 := sd.Dict["N"].(types.Integer)
		first, ok2 := sd.Dict["First"].(types.Integer)
		if !ok1 || !ok2 || n < 0 || int(first) > len(content) || int(first) < 0 {
			return nil, errLazy
		}
		s.first = int(first)
		head := content[:first]
		for range int(n) {
			_, n1, ok1 := pdfInt(head)
			off, n2, ok2 := pdfInt(head[n1:])
			if !ok1 || !ok2 || off < 0 || s.first+off > len(content) {
				return nil, errLazy
			}
			s.offs = append(s.offs, off)
			head = head[n1+n2:]
		}
		l.stms[e.stm] = s
	}
	if e.idx < 0 || e.idx >= len(s.offs) { // the index is the table's word, as for pdfcpu
		return nil, errLazy
	}
	start, end := s.first+s.offs[e.idx], len(s.content)
	if e.idx+1 < len(s.offs) {
		end = max(start, min(end, s.first+s.offs[e.idx+1]))
	}
	line := string(s.content[start:end])
	return model.ParseObjectContext(context.Background(), &line, 0, pdfMaxDepth*2)
}

// parse parses the first object in data[from:to] and returns it with the offset where it
// ends. It reads the first lazyWindow bytes first (an object is rarely longer, and a file
// whose objects lack their endobj must not cost a copy of the rest per object), then at
// most lazyMaxObject.
func (l *lazyPDF) parse(from, to int) (types.Object, int, error) {
	for _, end := range []int{min(to, from+lazyWindow), min(to, from+lazyMaxObject)} {
		line := string(l.data[from:end])
		o, err := model.ParseObjectContext(context.Background(), &line, 0, pdfMaxDepth*2)
		if err == nil {
			return o, end - len(line), nil
		}
		if end == to {
			break
		}
	}
	return nil, 0, errLazy
}

// lazyWindow is how much of an object's text parse reads first.
const lazyWindow = 8 << 10

// pdfInt reads an unsigned decimal integer after white space, returning it and the bytes
// read.
func pdfInt(b []byte) (int, int, bool) {
	rest := skipSpace(b)
	i := 0
	for i < len(rest) && i < 12 && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, 0, false
	}
	n, err := strconv.Atoi(string(rest[:i]))
	return n, len(b) - len(rest) + i, err == nil
}

// skipSpace skips PDF white space and comments.
func skipSpace(b []byte) []byte {
	for len(b) > 0 {
		switch b[0] {
		case ' ', '\t', '\r', '\n', '\f', 0:
			b = b[1:]
		case '%':
			i := bytes.IndexAny(b, "\r\n")
			if i < 0 {
				return nil
			}
			b = b[i:]
		default:
			return b
		}
	}
	return b
}
