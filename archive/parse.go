package archive

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/textproto"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jhillyerd/enmime/v2"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/archive/charset"
	"github.com/mailledger/mailledger/extract"
)

// Parsed is what the archive keeps of a message besides its original bytes: the metadata
// rows, the text for the full-text index and the attachments' facts.
type Parsed struct {
	From        string // lower-cased address, "" when none could be read
	FromDomain  string
	Subject     string
	MessageID   string
	InReplyTo   string
	References  string
	Sent        time.Time // Date header; zero when missing or unreadable
	To, Cc, Bcc []string  // lower-cased addresses
	Envelope    []string  // SMTP envelope recipients (RCPT TO), lower-cased
	// Roles are the message's address roles by the address rule (docs/address-rule.md):
	// analyzer.Distinct of analyzer.Roles over the top-level header, and the envelope
	// recipients. From, To, Cc and Bcc above are the older reading the search filters use.
	// Set by Parse (import), not by ParseChecked (a stored message read back).
	Roles []analyzer.Address
	// Terms are the message's distinct search terms (analyzer.TermSet over terms.go's
	// texts), what every dialect's index stores. Set by Parse (import), not ParseChecked.
	Terms []string
	// Positioned is Terms as an index that keeps word positions stores them (PostgreSQL):
	// analyzer.TermSet.Positioned. Set with Terms when the parser's Positions is.
	Positioned  analyzer.Positioned
	Text        string // the text/plain body, else text from the HTML body
	Attachments []Attachment
	Digest      [32]byte // SHA-256 of the original bytes
	BodyDigest  [32]byte // SHA-256 of the bytes after the header
	Size        int
	Spam        bool
	Warnings    []string // what the parser had to guess, at most maxWarnings
	// Tags are the tags of the header checks its header matched (Archive.Prepare).
	Tags []string
	// ParseNote says why the part tree was read only in part (nested deeper than
	// MaxPartDepth, more than MaxParts parts, …): the text and attachments are those of the
	// parts read. "" when the whole tree was read.
	ParseNote string
	// DateNote says how the Date header was read when not as written (an unknown or
	// missing zone read as UTC, an unusable date replaced by the arrival time); "" else.
	DateNote string
	charsets []string // the charsets the header's raw bytes are read in (messageCharsets)
}

// Attachment is one attached file of a message.
type Attachment struct {
	Seq     int // 1, 2, 3 … in document order
	Name    string
	Type    string
	Size    int
	Digest  [32]byte
	Content []byte // decoded content (not stored in the database)
}

// ErrNotMessage means the bytes do not look like an email at all.
var ErrNotMessage = errors.New("not an email message")

// Parser reads messages with enmime (github.com/jhillyerd/enmime): a tolerant MIME parser
// that decodes encoded words, sorts the parts into body, attachments and inlines, turns
// HTML-only bodies into text and records, rather than fails on, malformed parts. The part
// tree, with its content raw, comes from the splitter (parse_split.go), which slices it out
// of the message several times faster than enmime's byte-at-a-time boundary reader, or from
// enmime's ReadParts for the messages the splitter leaves to it; decodeParts decodes
// transfer encodings and declared charsets at a fraction of the cost of enmime's readers and
// charset detection (decode.go).
type Parser struct {
	// SpamHeader is SPAM_HEADER_LINE ("X-Spam-Flag: YES"); empty disables it.
	SpamHeader string
	// Positions makes Parse give Parsed.Positioned too (set by NewParser): only an index
	// that keeps word positions (PostgreSQL's) uses it, and the other archives save its
	// cost.
	Positions bool
	// Documents remembers the text of PDF and office attachments by their content (set by
	// NewParser, documentCacheBytes), so that one document met in many messages is read
	// once; nil reads every copy.
	Documents *extract.Cache
	parser    *enmime.Parser
}

// documentCacheBytes bounds the text a parser keeps of the documents it read: a bulk
// import meets the same attachment in each recipient's mailbox, and a document's text is
// on average a tenth of its size, so 32 MiB hold the text of some hundreds of recent ones.
const documentCacheBytes = 32 << 20

// NewParser returns a parser; spamHeader may be empty.
func NewParser(spamHeader string) *Parser {
	return &Parser{SpamHeader: spamHeader, Positions: true, Documents: extract.NewCache(documentCacheBytes), parser: enmime.NewParser(
		enmime.SkipMalformedParts(true), enmime.MaxStoredPartErrors(maxStoredPartErrors), enmime.RawContent(true))}
}

// Parse reads raw, which it never changes.
func (p *Parser) Parse(raw []byte) (*Parsed, error) {
	out, _, err := p.parseFor(raw, true, true)
	if err == nil {
		out.Digest, out.BodyDigest = sha256.Sum256(raw), sha256.Sum256(bodyOf(withoutFromLine(raw)))
	}
	return out, err
}

// ParseChecked is Parse for bytes whose SHA-256 the caller has just checked against digest
// (a message read back from the store): Digest is set to digest and BodyDigest is left
// zero, instead of hashing the message twice more.
func (p *Parser) ParseChecked(raw []byte, digest [32]byte) (*Parsed, error) {
	out, _, err := p.parse(raw, true)
	if err == nil {
		out.Digest = digest
	}
	return out, err
}

// parse reads raw, with the splitter when split is set and it takes the message; why says
// why the splitter left the message to enmime (nil when it did not).
func (p *Parser) parse(raw []byte, split bool) (out *Parsed, why, err error) {
	return p.parseFor(raw, split, false)
}

// parseFor is parse that also reads the address roles and gathers the search terms
// (Parsed.Roles, Parsed.Terms) when terms is set.
func (p *Parser) parseFor(raw []byte, split, terms bool) (out *Parsed, why, err error) {
	content := withoutFromLine(raw)
	if !looksLikeMessage(content) {
		return nil, nil, ErrNotMessage
	}
	root, note, why, err := p.readParts(content, split)
	if err != nil {
		return nil, why, err
	}
	out, err = p.fromParts(raw, root)
	if err != nil {
		return nil, why, err
	}
	out.ParseNote = note
	if terms { // and roles: both read the header's fields
		fields := decodedFields(content, out.charsets)
		roles := analyzer.Roles(fields)
		out.Roles = analyzer.Distinct(roles)
		c := newTermCollector(p)
		c.digests = contentDigests(out.Attachments)
		c.header(fields, roles)
		c.parts(root, 0)
		out.ParseNote = joinNotes(note, c.note())
		out.Terms, out.Positioned = c.terms(p.Positions)
	}
	return out, why, nil
}

// readParts returns content's part tree, from the splitter if split is set and it takes the
// message, else from enmime's ReadParts when the message is within the bounds enmime can be
// trusted with (enmimeBounded), else from the lenient splitter. note says why the tree is
// not whole.
func (p *Parser) readParts(content []byte, split bool) (root *enmime.Part, note string, why, err error) {
	if split {
		if root, note, why = p.splitParts(content, false); why == nil {
			return root, note, nil, nil
		}
	}
	if !enmimeBounded(content) {
		if root, note, err = p.splitParts(content, true); err != nil {
			return nil, "", why, fmt.Errorf("parse mime: %w", err)
		}
		return root, note, why, nil
	}
	root, err = p.parser.ReadParts(bytes.NewReader(content))
	if err != nil {
		return nil, "", why, fmt.Errorf("parse mime: %w", err)
	}
	return root, "", why, nil
}

// fromParts decodes the parts of root, sorts them into body and attachments and reads the
// headers.
func (p *Parser) fromParts(raw []byte, root *enmime.Part) (*Parsed, error) {
	h := messageHeader{header: root.Header, charsets: messageCharsets(root)}
	decodeParts(root, h.charsets)
	env, err := p.sortParts(root)
	if err != nil {
		return nil, fmt.Errorf("parse mime: %w", err)
	}
	out := &Parsed{Size: len(raw)}
	out.readHeaders(h)
	out.charsets = h.charsets
	out.Text = env.text
	if !utf8.ValidString(out.Text) { // else no copy: a 24 MB body would be two more
		out.Text = string(charset.Text([]byte(env.text)))
	}
	out.Attachments = attachmentsOf(env)
	out.Spam = p.isSpam(h)
	for _, e := range env.errors {
		out.warn(strings.ToValidUTF8(e.Error(), "\uFFFD"))
	}
	return out, nil
}

// messageHeader is the top-level header; get decodes a value through archive/charset (raw
// bytes in the message's declared charset, else windows-1252; encoded words).
type messageHeader struct {
	header   textproto.MIMEHeader
	charsets []string
}

func (h messageHeader) get(name string) string {
	return charset.Header(h.header.Get(name), h.charsets...)
}

// values returns every value of the header name, decoded.
func (h messageHeader) values(name string) []string {
	var out []string
	for _, v := range h.header.Values(name) {
		out = append(out, charset.Header(v, h.charsets...))
	}
	return out
}

// raw returns the header's value with its raw bytes read as UTF-8 but its encoded words
// left for a parser that knows where they may be (addresses).
func (h messageHeader) raw(name string) string {
	return charset.Raw(h.header.Get(name), h.charsets...)
}

func (m *Parsed) readHeaders(h messageHeader) {
	m.Subject = strings.TrimSpace(h.get("Subject"))
	m.MessageID = strings.Trim(strings.TrimSpace(h.get("Message-Id")), "<>")
	m.InReplyTo = strings.TrimSpace(h.get("In-Reply-To"))
	m.References = strings.Join(strings.Fields(h.get("References")), " ")
	if from := m.addresses(h, "From"); len(from) > 0 {
		m.From = from[0]
	} else if from := m.addresses(h, "Sender"); len(from) > 0 {
		m.From = from[0]
	}
	if at := strings.LastIndexByte(m.From, '@'); at >= 0 {
		m.FromDomain = m.From[at+1:]
	}
	m.To, m.Cc, m.Bcc = m.addresses(h, "To"), m.addresses(h, "Cc"), m.addresses(h, "Bcc")
	if date := h.get("Date"); date != "" {
		if d, note, ok := parseDate(date); ok {
			m.Sent, m.DateNote = d, note
		} else {
			m.DateNote = "Date header unusable: the arrival time is the message's date"
			m.warn("unreadable Date header")
		}
	}
}

// addresses reads an address header by the address rule (analyzer.ParseList: obsolete
// syntax, every mailbox that can be recovered from a broken list): each mailbox's key, in
// order of first appearance. A header that holds none is noted as unreadable.
func (m *Parsed) addresses(h messageHeader, header string) []string {
	rawValue := h.raw(header)
	if strings.TrimSpace(rawValue) == "" {
		return nil
	}
	list := addressList{}
	for _, mb := range analyzer.ParseList(rawValue) {
		list.add(mb.Key)
	}
	if len(list.out) == 0 {
		m.warn("unreadable " + header + " header")
	}
	return list.out
}

// maxWarnings bounds Parsed.Warnings (a message of many broken parts has a warning each).
const maxWarnings = 100

func (m *Parsed) warn(w string) {
	if len(m.Warnings) < maxWarnings {
		m.Warnings = append(m.Warnings, w)
	}
}

// appendAddresses appends to list the addresses (lower-cased, trimmed) it does not hold yet
// and that look like one (a @), in time linear in both.
func appendAddresses(list []string, addrs ...string) []string {
	l := addressList{out: list, seen: make(map[string]bool, len(list)+len(addrs))}
	for _, a := range list {
		l.seen[a] = true
	}
	for _, a := range addrs {
		l.add(a)
	}
	return l.out
}

// addressList gathers distinct lower-cased addresses in order; seen keeps it linear in a
// header of 100,000 recipients.
type addressList struct {
	out  []string
	seen map[string]bool
}

func (l *addressList) add(addr string) {
	addr = strings.ToLower(strings.TrimSpace(addr))
	if addr == "" || !strings.Contains(addr, "@") || l.seen[addr] {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[addr] = true
	l.out = append(l.out, addr)
}

func attachmentsOf(env *envelope) []Attachment {
	var out []Attachment
	parts := append(append(append([]*enmime.Part{}, env.attachments...), env.inlines...), env.others...)
	for _, part := range parts {
		if part.FileName == "" && env.hasInlines && isInlineBody(part) {
			continue
		}
		if part.FileName == "" && part.Disposition != "attachment" {
			continue
		}
		out = append(out, Attachment{
			Seq: len(out) + 1, Name: part.FileName, Type: part.ContentType,
			Size: len(part.Content), Digest: sha256.Sum256(part.Content), Content: part.Content,
		})
	}
	return out
}

func isInlineBody(p *enmime.Part) bool {
	return strings.HasPrefix(p.ContentType, "text/")
}

func (p *Parser) isSpam(h messageHeader) bool {
	name, value, ok := strings.Cut(p.SpamHeader, ":")
	if !ok {
		return false
	}
	for _, v := range h.values(strings.TrimSpace(name)) {
		if strings.EqualFold(strings.TrimSpace(v), strings.TrimSpace(value)) {
			return true
		}
	}
	return false
}

// withoutFromLine skips the mbox "From sender date" line that single-message files saved
// from a mailbox often start with. The stored bytes keep it: they are the file as given.
// "From  : a@b.example" (white space before the colon, RFC 5322 section 4.5) is a From
// field, not such a line.
func withoutFromLine(raw []byte) []byte {
	if bytes.HasPrefix(raw, []byte("From ")) && !bytes.HasPrefix(bytes.TrimLeft(raw[5:], " \t"), []byte(":")) {
		if _, rest, ok := bytes.Cut(raw, []byte("\n")); ok {
			return rest
		}
	}
	return raw
}

// looksLikeMessage wants a header block: a first line of the form "Name: value" (the
// obsolete "Name : value" of RFC 5322 §4.5 included).
func looksLikeMessage(raw []byte) bool {
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	name, _, ok := bytes.Cut(line, []byte(":"))
	name = bytes.TrimRight(name, " \t")
	if !ok || len(name) == 0 {
		return false
	}
	for _, c := range name {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// bodyOf returns the bytes after the first empty line.
func bodyOf(raw []byte) []byte {
	if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
		return raw[i+4:]
	}
	if i := bytes.Index(raw, []byte("\n\n")); i >= 0 {
		return raw[i+2:]
	}
	return nil
}
