package archive

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"strconv"
	"strings"

	"github.com/jhillyerd/enmime/v2"
	"github.com/jhillyerd/enmime/v2/mediatype"
)

// The splitter reads a multipart message's part tree from a byte slice, the tree enmime's
// ReadParts (parser.go, part.go) builds, at a fraction of its cost: enmime's boundaryReader
// (boundary.go) peeks, reads and buffers the message one byte at a time, most of the parse.
// Here boundaries are found with bytes.Index and each part is sliced out of the message.
//
// It gives enmime's tree exactly or nothing. It applies boundaryReader's own rules (which
// lines are delimiters, the blank lines and preamble it skips, the bytes it checks for a
// boundary at the start of each part), reads headers with enmime.ReadHeader and media types
// with enmime's mediatype package, and fills each part's ContentType, Disposition, FileName,
// Charset, Boundary, Errors and Content as part.go's setupHeaders and decodeContent do.
// Whatever enmime would treat in a way it does not reproduce (a boundary that is not closed,
// a part enmime would drop or turn into an error, a boundary found in the middle of a line,
// a file name in a charset only enmime's internal table knows, …) makes it decline with an
// errDeclined error, and the message goes through enmime's ReadParts instead.
//
// Not filled: ContentID, FileModDate and ContentTypeParams, which nothing here reads. The
// parts below the root have no parser (an unexported field): enmime reads it for the root
// (which is enmime's own) and otherwise only to cap the errors of the HTML part when
// html2text fails, which it does not on a string.

// errDeclined wraps the reason the splitter left a message to enmime.
var errDeclined = errors.New("splitter declined")

func declined(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errDeclined}, args...)...)
}

const (
	// maxStoredPartErrors is the parser's enmime.MaxStoredPartErrors, which the splitter
	// applies to the parts it makes.
	maxStoredPartErrors = 10
	// partStartWindow is how many bytes at the start of a part boundaryReader reads in its
	// first Read (the size of the bufio.Reader that enmime reads the part's header with):
	// within them it looks for a boundary at every byte, not only after line breaks.
	partStartWindow = 4096
	// maxBoundary keeps boundaryReader's peeks far below its 4 KiB buffer (RFC 2046
	// allows 70 characters).
	maxBoundary = 200
)

// splitParts returns the part tree of content as enmime's ReadParts would with the parser's
// options (SkipMalformedParts, MaxStoredPartErrors(10), RawContent), or an errDeclined error.
// The root is enmime's own, read from the header alone, so that EnvelopeFromPart can use it.
//
// The tree is bounded (MaxPartDepth, MaxParts): what lies deeper or further is left out and
// note says so. With lenient set (a message enmime cannot be trusted to read within those
// bounds, see enmimeBounded), what the splitter would decline ends the part it is in
// instead, and note says so too.
func (p *Parser) splitParts(content []byte, lenient bool) (root *enmime.Part, note string, err error) {
	end := headerEnd(content)
	root, err = p.parser.ReadParts(bytes.NewReader(content[:end]))
	if err != nil {
		return nil, "", declined("top-level header: %v", err)
	}
	body := content[end:]
	if !strings.HasPrefix(root.ContentType, "multipart/") {
		// A single part: enmime reads everything after the header as its content.
		setContent(root, body)
		return root, "", nil
	}
	if root.Boundary == "" {
		if lenient {
			return root, "multipart without a boundary: its content was not read", nil
		}
		return nil, "", declined("multipart without a boundary")
	}
	s := &splitter{header: bufio.NewReader(nil), lenient: lenient}
	if root.Epilogue, err = s.readChildren(root, body, 1); err != nil {
		return nil, "", err
	}
	return root, s.note, nil
}

// headerEnd returns where the top-level header ends as enmime.ReadHeader reads it: after the
// first empty line ("\n" or "\r\n"), else at the end.
func headerEnd(b []byte) int {
	for i := 0; i < len(b); {
		switch {
		case b[i] == '\n':
			return i + 1
		case b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n':
			return i + 2
		}
		nl := bytes.IndexByte(b[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	return len(b)
}

// splitter builds parts; header is reused to read every part's header. parts counts the
// parts made, note says why the tree is not whole ("" when it is).
type splitter struct {
	header  *bufio.Reader
	lenient bool
	parts   int
	note    string
}

// stop records the first reason the tree was cut short.
func (s *splitter) stop(note string) {
	if s.note == "" {
		s.note = note
	}
}

// full says whether the tree holds MaxParts parts already.
func (s *splitter) full() bool { return s.parts >= MaxParts }

// readChildren does what enmime's parseParts does for parent, whose body is region: it
// finds the parts, reads each one's header, keeps the content of leaves and descends into
// nested multiparts. It returns the epilogue (what follows the closing boundary).
// depth is parent's children's depth (1 below the root). Beyond MaxParts parts it stops
// reading, and a lenient splitter stops reading parent's children where it would decline.
func (s *splitter) readChildren(parent *enmime.Part, region []byte, depth int) ([]byte, error) {
	epilogue, err := s.readEach(parent, region, depth)
	if parent.Parent != nil {
		parent.PartID += ".0" // enmime marks the root of a nested subtree so
	}
	if err != nil && s.lenient && errors.Is(err, errDeclined) {
		s.stop("MIME structure not read to its end: " + strings.TrimPrefix(err.Error(), errDeclined.Error()+": "))
		return nil, nil
	}
	return epilogue, err
}

func (s *splitter) readEach(parent *enmime.Part, region []byte, depth int) ([]byte, error) {
	if len(parent.Boundary) > maxBoundary {
		return nil, declined("boundary of %d bytes", len(parent.Boundary))
	}
	b := newBoundaries(region, parent.Boundary)
	var last *enmime.Part // parent's last child: enmime's AddChild walks the siblings each time
	for index := 1; ; index++ {
		start, more, err := b.next()
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		if s.full() {
			s.stop(fmt.Sprintf("more than %d MIME parts: the parts after the first %d were not read", MaxParts, MaxParts))
			return nil, nil
		}
		end, err := b.partEnd(start)
		if err != nil {
			return nil, err
		}
		b.pos = end
		part := &enmime.Part{PartID: strconv.Itoa(index)}
		if parent.Parent != nil {
			part.PartID = parent.PartID + "." + part.PartID
		}
		s.parts++
		if err := s.readPart(parent, last, part, region[start:end], depth); err != nil {
			return nil, err
		}
		last = part
	}
	return region[b.pos:], nil
}

// link adds part to parent after last, as enmime's AddChild does.
func link(parent, last, part *enmime.Part) {
	part.Parent = parent
	if last == nil {
		parent.FirstChild = part
	} else {
		last.NextSibling = part
	}
}

// readPart reads one part (raw is its header and content) and adds it to parent.
func (s *splitter) readPart(parent, last, part *enmime.Part, raw []byte, depth int) error {
	n, err := s.readHeader(part, raw)
	if err != nil {
		return err
	}
	content := raw[n:]
	link(parent, last, part)
	switch {
	case part.Boundary == "":
		setContent(part, content)
		if part.ContentType == "" {
			addProblem(part, enmime.ErrorMissingContentType, false, "content-type is empty for part id: "+part.PartID)
		}
		return nil
	case part.ContentType == "text/plain" || part.ContentType == "text/html":
		return declined("text part %s with a boundary parameter", part.PartID)
	case depth >= MaxPartDepth:
		s.stop(fmt.Sprintf("MIME parts nested more than %d deep: the parts below were not read", MaxPartDepth))
		return nil
	default:
		part.Epilogue, err = s.readChildren(part, content, depth+1)
		return err
	}
}

// readHeader does what enmime's setupHeaders does for a part (no default content type) and
// returns the length of the header.
func (s *splitter) readHeader(part *enmime.Part, raw []byte) (int, error) {
	r := bytes.NewReader(raw)
	s.header.Reset(r)
	header, err := enmime.ReadHeader(s.header, partProblems{part})
	if err != nil {
		return 0, declined("header of part %s: %v", part.PartID, err)
	}
	n := len(raw) - r.Len() - s.header.Buffered()
	part.Header = header
	ctype := header.Get("Content-Type")
	if ctype == "" {
		addProblem(part, enmime.ErrorMissingContentType, false, "MIME parts should have a Content-Type header")
		return n, nil
	}
	mtype, params, invalid, err := mediatype.Parse(ctype)
	if err != nil {
		return 0, declined("content type of part %s: %v", part.PartID, err)
	}
	for _, name := range invalid {
		addProblem(part, enmime.ErrorMalformedHeader, false, fmt.Sprintf("Content-Type header has malformed parameter %q", name))
	}
	part.ContentType = mtype
	// The file name: Content-Disposition's filename, else Content-Type's name, else its file.
	names := []string{params["name"], params["file"]}
	if disposition, dparams, _, err := mediatype.Parse(header.Get("Content-Disposition")); err == nil {
		part.Disposition = disposition
		names = append([]string{dparams["filename"]}, names...)
	}
	for _, name := range names {
		if part.FileName != "" {
			break
		}
		if part.FileName, err = decodeFileName(name); err != nil {
			return 0, declined("file name of part %s: %v", part.PartID, err)
		}
	}
	part.Charset = params["charset"]
	part.Boundary = params["boundary"]
	return n, nil
}

// errCharsetTable stops the decoding of a file name whose encoded words use a charset other
// than UTF-8, ISO-8859-1 or US-ASCII: enmime decodes those with its internal charset table.
var errCharsetTable = errors.New("encoded word in a charset left to enmime")

// decodeFileName decodes RFC 2047 encoded words as enmime's DecodeExtHeader does: on any
// error the name stays as it is.
func decodeFileName(name string) (string, error) {
	if !strings.Contains(name, "=?") {
		return name, nil
	}
	var charset string
	dec := mime.WordDecoder{CharsetReader: func(cs string, _ io.Reader) (io.Reader, error) {
		charset = cs
		return nil, errCharsetTable
	}}
	decoded, err := dec.DecodeHeader(name)
	switch {
	case charset != "":
		return "", fmt.Errorf("%w: %q", errCharsetTable, charset)
	case err != nil:
		return name, nil
	}
	return decoded, nil
}

// partProblems collects header problems on a part as enmime's partErrorCollector does.
type partProblems struct{ part *enmime.Part }

func (c partProblems) AddError(name, format string, args ...any) {
	addProblem(c.part, name, true, fmt.Sprintf(format, args...))
}

func (c partProblems) AddWarning(name, format string, args ...any) {
	addProblem(c.part, name, false, fmt.Sprintf(format, args...))
}

// addProblem records a problem on a part, at most maxStoredPartErrors of them, as enmime does.
func addProblem(p *enmime.Part, name string, severe bool, detail string) {
	if len(p.Errors) < maxStoredPartErrors {
		p.Errors = append(p.Errors, &enmime.Error{Name: name, Detail: detail, Severe: severe})
	}
}

// setContent gives a leaf its raw content: a slice of the message when decodePart will
// replace it, else a copy, so that no part keeps the caller's bytes. Never nil, as enmime's.
func setContent(p *enmime.Part, raw []byte) {
	if replacesContent(p) {
		p.Content = raw[:len(raw):len(raw)]
		return
	}
	p.Content = make([]byte, len(raw))
	copy(p.Content, raw)
}
