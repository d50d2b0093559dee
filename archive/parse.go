package archive

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/jhillyerd/enmime/v2"
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
	Text        string    // the text/plain body, else text from the HTML body
	Attachments []Attachment
	Digest      [32]byte // SHA-256 of the original bytes
	BodyDigest  [32]byte // SHA-256 of the bytes after the header
	Size        int
	Spam        bool
	Warnings    []string // what the parser had to guess
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
	parser     *enmime.Parser
}

// NewParser returns a parser; spamHeader may be empty.
func NewParser(spamHeader string) *Parser {
	return &Parser{SpamHeader: spamHeader, parser: enmime.NewParser(
		enmime.SkipMalformedParts(true), enmime.MaxStoredPartErrors(maxStoredPartErrors), enmime.RawContent(true))}
}

// Parse reads raw, which it never changes.
func (p *Parser) Parse(raw []byte) (*Parsed, error) {
	out, _, err := p.parse(raw, true)
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
	content := withoutFromLine(raw)
	if !looksLikeMessage(content) {
		return nil, nil, ErrNotMessage
	}
	root, why, err := p.readParts(content, split)
	if err != nil {
		return nil, why, err
	}
	out, err = p.fromParts(raw, root)
	return out, why, err
}

// readParts returns content's part tree, from the splitter if split is set and it takes the
// message, else from enmime's ReadParts.
func (p *Parser) readParts(content []byte, split bool) (root *enmime.Part, why, err error) {
	if split {
		if root, why = p.splitParts(content); why == nil {
			return root, nil, nil
		}
	}
	root, err = p.parser.ReadParts(bytes.NewReader(content))
	if err != nil {
		return nil, why, fmt.Errorf("parse mime: %w", err)
	}
	return root, why, nil
}

// fromParts decodes the parts of root, sorts them into body and attachments and reads the
// headers.
func (p *Parser) fromParts(raw []byte, root *enmime.Part) (*Parsed, error) {
	decodeParts(root)
	// The root is always enmime's own (the splitter's too), which EnvelopeFromPart needs.
	env, err := p.parser.EnvelopeFromPart(root)
	if err != nil {
		return nil, fmt.Errorf("parse mime: %w", err)
	}
	out := &Parsed{Size: len(raw)}
	out.readHeaders(env)
	out.Text = env.Text
	out.Attachments = attachmentsOf(env)
	out.Spam = p.isSpam(env)
	for _, e := range env.Errors {
		out.Warnings = append(out.Warnings, e.Error())
	}
	return out, nil
}

func (m *Parsed) readHeaders(env *enmime.Envelope) {
	m.Subject = strings.TrimSpace(env.GetHeader("Subject"))
	m.MessageID = strings.Trim(strings.TrimSpace(env.GetHeader("Message-Id")), "<>")
	m.InReplyTo = strings.TrimSpace(env.GetHeader("In-Reply-To"))
	m.References = strings.Join(strings.Fields(env.GetHeader("References")), " ")
	if from := m.addresses(env, "From"); len(from) > 0 {
		m.From = from[0]
	} else if from := m.addresses(env, "Sender"); len(from) > 0 {
		m.From = from[0]
	}
	if at := strings.LastIndexByte(m.From, '@'); at >= 0 {
		m.FromDomain = m.From[at+1:]
	}
	m.To, m.Cc, m.Bcc = m.addresses(env, "To"), m.addresses(env, "Cc"), m.addresses(env, "Bcc")
	if d, err := env.Date(); err == nil {
		m.Sent = d.UTC()
	} else if env.GetHeader("Date") != "" {
		m.Warnings = append(m.Warnings, "unreadable Date header")
	}
}

// addresses reads an address header leniently: the parsed list when it parses, else every
// token that looks like an address.
func (m *Parsed) addresses(env *enmime.Envelope, header string) []string {
	rawValue := env.GetHeader(header)
	if strings.TrimSpace(rawValue) == "" {
		return nil
	}
	var out []string
	if list, err := env.AddressList(header); err == nil {
		for _, a := range list {
			out = appendAddress(out, a.Address)
		}
		return out
	}
	m.Warnings = append(m.Warnings, "unreadable "+header+" header")
	for _, tok := range strings.FieldsFunc(rawValue, func(r rune) bool { return strings.ContainsRune(" ,;<>\"'()\t", r) }) {
		if a, err := mail.ParseAddress(tok); err == nil {
			out = appendAddress(out, a.Address)
		}
	}
	return out
}

func appendAddress(list []string, addr string) []string {
	addr = strings.ToLower(strings.TrimSpace(addr))
	if addr == "" || !strings.Contains(addr, "@") {
		return list
	}
	for _, have := range list {
		if have == addr {
			return list
		}
	}
	return append(list, addr)
}

func attachmentsOf(env *enmime.Envelope) []Attachment {
	var out []Attachment
	parts := append(append(append([]*enmime.Part{}, env.Attachments...), env.Inlines...), env.OtherParts...)
	for _, part := range parts {
		if part.FileName == "" && env.Inlines != nil && isInlineBody(part) {
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

func (p *Parser) isSpam(env *enmime.Envelope) bool {
	name, value, ok := strings.Cut(p.SpamHeader, ":")
	if !ok {
		return false
	}
	for _, v := range env.GetHeaderValues(strings.TrimSpace(name)) {
		if strings.EqualFold(strings.TrimSpace(v), strings.TrimSpace(value)) {
			return true
		}
	}
	return false
}

// withoutFromLine skips the mbox "From sender date" line that single-message files saved
// from a mailbox often start with. The stored bytes keep it: they are the file as given.
func withoutFromLine(raw []byte) []byte {
	if bytes.HasPrefix(raw, []byte("From ")) {
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
