// Package extract returns the plain text of document attachments (PDF, Word, Excel,
// PowerPoint, OpenDocument, RTF) so that the search index can hold it, as piler does.
//
// The rules of an extraction:
//
//  1. The kind is read from the content: %PDF- in the first KiB, {\rtf at the start, a zip
//     whose [Content_Types].xml names a Word, Excel or PowerPoint main part, or whose
//     mimetype entry (or content.xml) says OpenDocument text, spreadsheet or presentation.
//     The declared content type and the file name are hints only: they choose between
//     kinds the content leaves open and never make other content a document.
//  2. Anything else is not a document: Extract returns ok=false and no note.
//  3. Text is valid UTF-8 with no markup; paragraphs, table cells, sheet cells, slides and
//     pages are separated by white space, as a reader sees them.
//  4. One extraction is bounded: at most Limits.MaxInput bytes of attachment are read,
//     Limits.MaxUnzip bytes decompressed, Limits.MaxText bytes of text returned, and it
//     stops at Limits.Timeout or when ctx ends. Past a bound, the text read so far is
//     returned with a Note saying which bound; time and memory are linear in the input.
//  5. A damaged document yields the text read before the damage and a Note "damaged: …";
//     Extract never panics (a panic inside a reader is recovered into such a note).
package extract

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Limits bound one extraction. Zero fields take the defaults.
type Limits struct {
	MaxInput int64         // bytes of attachment read at most (default 32 MiB); larger: not extracted, note says so
	MaxText  int           // bytes of text returned at most (default 1 MiB); cut at a UTF-8 boundary, note says so
	MaxUnzip int64         // total decompressed bytes read from a zip-based document (default 64 MiB), the zip-bomb guard
	Timeout  time.Duration // wall time per attachment (default 5 s)
}

// The defaults of Limits.
const (
	DefaultMaxInput = 32 << 20
	DefaultMaxText  = 1 << 20
	DefaultMaxUnzip = 64 << 20
	DefaultTimeout  = 5 * time.Second
)

// setDefaults fills the zero (or negative) fields of lim.
func (lim *Limits) setDefaults() {
	if lim.MaxInput <= 0 {
		lim.MaxInput = DefaultMaxInput
	}
	if lim.MaxText <= 0 {
		lim.MaxText = DefaultMaxText
	}
	if lim.MaxUnzip <= 0 {
		lim.MaxUnzip = DefaultMaxUnzip
	}
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultTimeout
	}
}

// Result is the text of one document.
type Result struct {
	Kind string // "pdf", "docx", "xlsx", "pptx", "odt", "ods", "odp", "rtf"
	Text string // valid UTF-8, words separated by white space, no markup
	Note string // "" when the whole document was read; else why the text is partial or empty ("PDF encrypted", "text cut at 1 MiB", "time limit 5s reached", "damaged: ...")
}

// The kinds of document Extract reads.
const (
	KindPDF  = "pdf"
	KindDOCX = "docx"
	KindXLSX = "xlsx"
	KindPPTX = "pptx"
	KindODT  = "odt"
	KindODS  = "ods"
	KindODP  = "odp"
	KindRTF  = "rtf"
)

// Extract returns the text of data when it is a document of a supported kind (ok=true),
// else ok=false. contentType and name are the attachment's declared type and file name,
// used as hints only (rule 1). It never panics and stays within lim (rule 4).
func Extract(ctx context.Context, data []byte, contentType, name string, lim Limits) (res Result, ok bool) {
	lim.setDefaults()
	kind := sniff(data, hintOf(contentType, name))
	if kind == "" {
		return Result{}, false
	}
	if int64(len(data)) > lim.MaxInput {
		return Result{Kind: kind, Note: fmt.Sprintf("not read: %s is over the %s input limit", sizeText(int64(len(data))), sizeText(lim.MaxInput))}, true
	}
	res, _ = read(ctx, data, kind, lim)
	return res, true
}

// read extracts data, known to be of kind, within lim (defaults set). timed is true when
// the read ended at the time limit or with ctx: its result depends on the clock and the
// machine's load, not on data alone.
func read(ctx context.Context, data []byte, kind string, lim Limits) (res Result, timed bool) {
	limited, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	r := &run{lim: lim, out: newTextOut(lim.MaxText)}
	err := r.protect(func() error { return readers[kind](limited, r, data) })
	timed = errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || limited.Err() != nil
	return Result{Kind: kind, Text: r.out.String(), Note: r.note(ctx, err)}, timed
}

// readers read the text of each kind into r.out.
var readers = map[string]func(ctx context.Context, r *run, data []byte) error{
	KindPDF:  readPDF,
	KindDOCX: readDOCX,
	KindXLSX: readXLSX,
	KindPPTX: readPPTX,
	KindODT:  readODF,
	KindODS:  readODF,
	KindODP:  readODF,
	KindRTF:  readRTF,
}

// errPanic marks a panic recovered inside a reader.
var errPanic = errors.New("reader failed")

// protect runs read, turning a panic into an error.
func (r *run) protect(read func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errPanic, p)
		}
	}()
	return read()
}
