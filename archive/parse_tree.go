package archive

import (
	"bytes"
	"strings"

	"github.com/inbucket/html2text"
	"github.com/jhillyerd/enmime/v2"
)

// The bounds of a message's part tree. A message beyond them is archived and served as it
// came, with the text and attachments of the parts within them and a note (Parsed.ParseNote,
// the message's parse_note) saying what was left out: a MIME bomb of 50,000 nested
// multiparts otherwise cost gigabytes and a minute on every read (docs/operations.md).
const (
	// MaxPartDepth is how deep parts may nest below the message (its children are 1 deep).
	MaxPartDepth = 100
	// MaxParts is how many parts of a message are read, nested ones included.
	MaxParts = 10000
)

// enmimeBounded says whether enmime's ReadParts can be given content: its cost grows with
// the depth times the size (a reader per level, each byte passed through every level) and
// with the square of the parts of one multipart (AddChild walks the siblings). The nesting
// is at most the number of boundary parameters, the parts at most the number of "--" (every
// part follows a delimiter line). Linear, and run only on the messages the splitter left.
func enmimeBounded(content []byte) bool {
	return countFold(content, "boundary") <= MaxPartDepth && bytes.Count(content, []byte("--")) <= MaxParts
}

// countFold counts the ASCII case-insensitive occurrences of word (lower case) in b.
func countFold(b []byte, word string) int {
	n := 0
	first := word[0]
	for i := 0; i+len(word) <= len(b); i++ {
		if b[i]|0x20 == first && bytes.EqualFold(b[i:i+len(word)], []byte(word)) {
			n++
			i += len(word) - 1
		}
	}
	return n
}

// messageCharsets are the charsets the raw bytes of the message's headers are read in
// before windows-1252: the message's declared charset, else the first a part declares.
func messageCharsets(root *enmime.Part) []string {
	if root.Charset != "" {
		return []string{root.Charset}
	}
	if p := root.DepthMatchFirst(func(p *enmime.Part) bool { return p.Charset != "" }); p != nil {
		return []string{p.Charset}
	}
	return nil
}

// envelope is a message's parts sorted as enmime's EnvelopeFromPart sorts them.
type envelope struct {
	text, html                   string
	attachments, inlines, others []*enmime.Part
	hasInlines                   bool // inlines was looked for (enmime: Inlines != nil)
	errors                       []*enmime.Error
}

// sortParts sorts root's parts into body, attachments, inlines and others. A single part
// goes through enmime's EnvelopeFromPart; a multipart through sortMultipart, which applies
// the same rules in time linear in the parts (enmime joins the text of each text part to
// the text so far, quadratic in a message of thousands of them).
func (p *Parser) sortParts(root *enmime.Part) (*envelope, error) {
	if !strings.HasPrefix(root.ContentType, "multipart/") || root.Boundary == "" {
		env, err := p.parser.EnvelopeFromPart(root)
		if err != nil {
			return nil, err
		}
		return &envelope{text: env.Text, html: env.HTML, attachments: env.Attachments, inlines: env.Inlines,
			others: env.OtherParts, hasInlines: env.Inlines != nil, errors: env.Errors}, nil
	}
	e := sortMultipart(root)
	if e.text == "" && e.html != "" {
		warn(root, enmime.ErrorPlainTextFromHTML, "Message did not contain a text/plain part")
		var err error
		if e.text, err = html2text.FromString(e.html); err != nil {
			e.text = ""
		}
	}
	_ = root.DepthMatchAll(func(part *enmime.Part) bool {
		if room := maxWarnings - len(e.errors); room > 0 {
			e.errors = append(e.errors, part.Errors[:min(room, len(part.Errors))]...)
		}
		return false
	})
	return e, nil
}

// sortMultipart is enmime's parseMultiPartBody: the text of the first text/plain part
// (breadth first) of a multipart/alternative, else of every text/plain part (depth first)
// joined by "\n--\n"; the first text/html part; attachments, inlines and other parts in
// breadth-first order.
func sortMultipart(root *enmime.Part) *envelope {
	e := &envelope{hasInlines: true}
	isBody := func(p *enmime.Part, ctype string) bool {
		return p.ContentType == ctype && p.Disposition != "attachment"
	}
	if root.ContentType == "multipart/alternative" {
		if p := root.BreadthMatchFirst(func(p *enmime.Part) bool { return isBody(p, "text/plain") }); p != nil {
			e.text = string(p.Content)
		}
	} else {
		var text strings.Builder
		n := 0
		_ = root.DepthMatchAll(func(p *enmime.Part) bool {
			if isBody(p, "text/plain") {
				if n++; n > 1 {
					text.WriteString("\n--\n")
				}
				text.Write(p.Content)
			}
			return false
		})
		e.text = text.String()
	}
	if p := root.DepthMatchFirst(func(p *enmime.Part) bool { return isBody(p, "text/html") }); p != nil {
		e.html = string(p.Content)
	}
	_ = root.BreadthMatchAll(func(p *enmime.Part) bool {
		multipart := strings.HasPrefix(p.ContentType, "multipart/")
		if p.Disposition == "attachment" || p.ContentType == "application/octet-stream" {
			e.attachments = append(e.attachments, p)
		}
		if p.Disposition == "inline" && !multipart {
			e.inlines = append(e.inlines, p)
		}
		if !multipart && p.Disposition == "" && p.ContentType != "application/octet-stream" &&
			p.ContentType != "text/plain" && p.ContentType != "text/html" {
			e.others = append(e.others, p)
		}
		return false
	})
	return e
}
