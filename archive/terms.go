package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jhillyerd/enmime/v2"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/archive/charset"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/extract"
)

// What a message's search terms are made of (docs/search-rules.md says it for users):
//   - the Subject, From, To, Cc and Bcc fields of its header, every repetition, decoded
//     (encoded words, raw 8-bit bytes in the declared charset else windows-1252): display
//     names and addresses alike;
//   - the decoded text of every text part, attachments included, and parts without a
//     header (read as text/plain); the visible text of every HTML part (alternatives
//     too), never its markup;
//   - message/delivery-status and header-only parts as text;
//   - attached messages (message/rfc822, message/global), their header fields and parts
//     as above, recursively up to maxAttachedDepth;
//   - every part's file name, as decoded, else as written;
//   - the text of PDF, Word, Excel, PowerPoint, OpenDocument and RTF attachments (package
//     extract), recognised by their content, bounded per attachment and per message.
// Each text goes into the analyzer's TermSet on its own (no phrase joins two texts). The
// set is bounded by maxTermBytes and the text read by maxIndexedText: past either, the rest
// is not indexed and the message's parse note says so.

const (
	// maxIndexedText bounds the bytes of text a message gives the analyzer.
	maxIndexedText = 16 << 20
	// maxTermBytes bounds the distinct terms of one message, in bytes: PostgreSQL keeps a
	// tsvector under 1 MB (lexemes and their headers).
	maxTermBytes = 768 << 10
	// maxAttachedDepth bounds how deep attached messages inside attached messages are read.
	maxAttachedDepth = 8
	// maxExtractTime bounds the time one message's documents take to read (each at most
	// extract.DefaultTimeout).
	maxExtractTime = 20 * time.Second
)

// indexedHeaders are the header fields whose text is indexed.
var indexedHeaders = []string{"subject", "from", "to", "cc", "bcc"}

// termCollector gathers one message's terms.
type termCollector struct {
	p           *Parser
	set         *analyzer.TermSet // from termSets, given back by terms
	budget      int               // bytes of text still allowed
	cut         bool
	skipped     []string                         // what was not indexed, for the parse note
	extractLeft time.Duration                    // extraction time left; 0 before the first document, < 0 when spent
	digests     map[contentRef][sha256.Size]byte // the attachments' digests (contentDigests), not hashed twice
}

// contentRef is one part's decoded content: where it starts and how long it is.
type contentRef struct {
	first *byte
	size  int
}

func contentKey(content []byte) contentRef {
	if len(content) == 0 {
		return contentRef{}
	}
	return contentRef{&content[0], len(content)}
}

// contentDigests maps each attachment's content to the SHA-256 attachmentsOf made of it,
// so that a document's text is looked up in the parser's cache without hashing it again.
func contentDigests(atts []Attachment) map[contentRef][sha256.Size]byte {
	if len(atts) == 0 {
		return nil
	}
	m := make(map[contentRef][sha256.Size]byte, len(atts))
	for _, a := range atts {
		if len(a.Content) > 0 {
			m[contentKey(a.Content)] = a.Digest
		}
	}
	return m
}

func newTermCollector(p *Parser) *termCollector {
	return &termCollector{p: p, set: termSets.Get().(*analyzer.TermSet), budget: maxIndexedText}
}

// termSets keeps the analyzer's term sets from one message to the next: a set's map and
// slices keep the room a message made in them (Reset), where a new set grows them from
// nothing, rehashing its map every time it doubles, for each message. A set that held more
// than maxPooledTerms is not kept, so one large message does not pin its memory.
var termSets = sync.Pool{New: func() any { return &analyzer.TermSet{MaxBytes: maxTermBytes} }}

const maxPooledTerms = 1 << 14

// terms returns a copy of the collected terms, positioned (analyzer.TermSet.Positioned)
// when positioned is set, and gives the set back: c is not used after.
func (c *termCollector) terms(positioned bool) (terms []string, pos analyzer.Positioned) {
	terms = slices.Clone(c.set.Terms())
	if positioned {
		pos = c.set.Positioned()
	}
	if c.set.Len() <= maxPooledTerms {
		c.set.Reset()
		termSets.Put(c.set)
	}
	c.set = nil
	return terms, pos
}

// text adds one text.
func (c *termCollector) text(s string) {
	if s == "" {
		return
	}
	if len(s) > c.budget {
		s, c.cut = database.Clip(s, c.budget), true
	}
	c.budget -= len(s)
	c.set.Add(s)
}

// header adds the indexed fields of a header block, given as decodedFields, with the
// address roles analyzer.Roles read in them: the decoded text of Subject, From, To, Cc
// and Bcc (every repetition, obsolete syntax included), and each of their mailboxes'
// address as written and its key (the IDNA form when the domain is international), on
// its own: a route or a comment inside an address leaves the address whole.
func (c *termCollector) header(fields []analyzer.Field, roles []analyzer.Address) {
	for _, f := range fields {
		name := strings.ToLower(strings.TrimSpace(f.Name))
		if slices.Contains(indexedHeaders, name) {
			c.text(charset.Header(unfold(f.Value)))
		}
	}
	for _, r := range roles {
		switch r.Header {
		case "From", "To", "Cc", "Bcc":
			c.text(r.Written)
			if r.Key != r.Written {
				c.text(r.Key)
			}
		}
	}
}

// unfold joins a field's folded lines.
func unfold(v string) string {
	if !strings.ContainsAny(v, "\r\n") {
		return v
	}
	return strings.NewReplacer("\r\n", "", "\n", "", "\r", "").Replace(v)
}

// parts adds the text of every leaf part of root's tree (decoded by decodeParts) and
// every file name; depth is how deep in attached messages root is.
func (c *termCollector) parts(root *enmime.Part, depth int) {
	_ = root.DepthMatchAll(func(part *enmime.Part) bool {
		c.text(part.FileName)
		if written := writtenFileName(part.Header.Get("Content-Disposition"), part.Header.Get("Content-Type")); written != part.FileName {
			c.text(charset.Raw(written, part.Charset))
		}
		if part.FirstChild != nil || c.budget == 0 {
			return false
		}
		switch ctype := strings.ToLower(part.ContentType); {
		case ctype == "message/rfc822" || ctype == "message/global":
			c.attached(part.Content, depth+1)
		case ctype == "text/html":
			c.text(analyzer.HTMLText(string(part.Content)))
		case looksBinary(part.Content):
			// A file labelled as text (a PDF sent as text/x-vcard): its bytes are no
			// words, but it may be a document.
			c.document(part, ctype)
		case ctype == "" || strings.HasPrefix(ctype, "text/") ||
			ctype == "message/delivery-status" || ctype == "message/global-delivery-status" ||
			ctype == "message/global-headers" || ctype == "message/disposition-notification":
			c.text(string(charset.Text(part.Content)))
		default:
			c.document(part, ctype)
		}
		return false
	})
}

// document adds the text of a PDF or office document (package extract: bounded in size
// and time per attachment), within the message's extraction time; what was read only in
// part is noted.
func (c *termCollector) document(part *enmime.Part, ctype string) {
	if c.extractLeft == 0 {
		c.extractLeft = maxExtractTime
	}
	if c.extractLeft < 0 {
		c.skip("attachments past " + maxExtractTime.String() + " of text extraction not read")
		return
	}
	lim := extract.Limits{Timeout: min(extract.DefaultTimeout, c.extractLeft)}
	start := time.Now()
	var res extract.Result
	var ok bool
	if digest, known := c.digests[contentKey(part.Content)]; known {
		res, ok = c.p.Documents.ExtractDigest(context.Background(), digest, part.Content, ctype, part.FileName, lim)
	} else {
		res, ok = c.p.Documents.Extract(context.Background(), part.Content, ctype, part.FileName, lim)
	}
	if c.extractLeft -= time.Since(start); c.extractLeft == 0 {
		c.extractLeft = -1
	}
	if !ok {
		return
	}
	c.text(res.Text)
	if res.Note != "" {
		name := part.FileName
		if name == "" {
			name = res.Kind
		}
		c.skip(fmt.Sprintf("attachment %q read in part: %s", database.Clip(name, 64), res.Note))
	}
}

// binaryMagic are the beginnings of document and archive files that travel under a text
// label: PDF, ZIP (office documents), OLE2 (older office documents), gzip.
var binaryMagic = []string{"%PDF-", "PK\x03\x04", "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", "\x1F\x8B"}

// looksBinary reports whether content, labelled as text, is a binary file: it begins like
// one, or its first 8 KiB hold a NUL byte or more than one control character in ten (text
// has tabs, line and page breaks, and an escape or two).
func looksBinary(content []byte) bool {
	for _, m := range binaryMagic {
		if bytes.HasPrefix(content, []byte(m)) {
			return true
		}
	}
	head := content[:min(len(content), 8<<10)]
	controls := 0
	for _, b := range head {
		switch {
		case b == 0:
			return true
		case b < 0x20 && b != '\t' && b != '\n' && b != '\r' && b != '\f', b == 0x7f:
			controls++
		}
	}
	return controls*10 > len(head)
}

// attached adds an attached message: its header fields and its parts. One that cannot be
// read as a message is read as text.
func (c *termCollector) attached(content []byte, depth int) {
	if depth > maxAttachedDepth {
		c.skip("attached messages nested deeper than " + strconv.Itoa(maxAttachedDepth) + " not indexed")
		return
	}
	content = withoutFromLine(content)
	if !looksLikeMessage(content) {
		c.text(string(charset.Text(content)))
		return
	}
	root, _, _, err := c.p.readParts(content, true)
	if err != nil {
		c.text(string(charset.Text(content)))
		return
	}
	charsets := messageCharsets(root)
	decodeParts(root, charsets)
	fields := decodedFields(content, charsets)
	c.header(fields, analyzer.Roles(fields))
	c.parts(root, depth)
}

func (c *termCollector) skip(why string) {
	for _, s := range c.skipped {
		if s == why {
			return
		}
	}
	c.skipped = append(c.skipped, why)
}

// note says what was left out of the index, "" when nothing was.
func (c *termCollector) note() string {
	notes := append([]string{}, c.skipped...)
	if c.cut {
		notes = append(notes, "text past "+strconv.Itoa(maxIndexedText>>20)+" MiB not indexed")
	}
	if c.set.Truncated() {
		notes = append(notes, "search terms past "+strconv.Itoa(maxTermBytes>>10)+" KiB not indexed")
	}
	return strings.Join(notes, "; ")
}

// joinNotes joins two parse notes.
func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
