package archive

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/mailledger/mailledger/archive/charset"
)

// Body is a message's body as a reader shows it: the text (the text/plain part, else text
// from the HTML part) and the first text/html part as written, unsanitised ("" when the
// message has none). Whoever shows HTML must sanitise it first.
type Body struct {
	Text string
	HTML string
	// Attachments are the message's attachments without their content, numbered 1, 2, …
	// as Attachment reads them.
	Attachments []Attachment
}

// Body reads the body of a visible message of tenant (for a participant, only of their
// mail, as GetFor): ErrNotFound when it is not there; an error when it does not parse.
func (a *Archive) Body(ctx context.Context, tenant string, id int64, participant string) (*Body, error) {
	env, err := a.envelopeOf(ctx, tenant, id, participant)
	if err != nil {
		return nil, err
	}
	atts := attachmentsOf(env)
	for i := range atts {
		atts[i].Content = nil
	}
	return &Body{Text: validText(env.text), HTML: validText(env.html), Attachments: atts}, nil
}

// Attachment reads attachment seq (1, 2, … as Body lists them, decoded) of a visible
// message of tenant (for a participant, only of their mail, as GetFor): ErrNotFound when
// the message or the attachment is not there.
func (a *Archive) Attachment(ctx context.Context, tenant string, id int64, participant string, seq int) (*Attachment, error) {
	env, err := a.envelopeOf(ctx, tenant, id, participant)
	if err != nil {
		return nil, err
	}
	atts := attachmentsOf(env)
	if seq < 1 || seq > len(atts) {
		return nil, fmt.Errorf("%w: attachment %d of message %d", ErrNotFound, seq, id)
	}
	return &atts[seq-1], nil
}

// envelopeOf reads and parses a visible message's parts.
func (a *Archive) envelopeOf(ctx context.Context, tenant string, id int64, participant string) (*envelope, error) {
	raw, err := a.RawFor(ctx, tenant, id, participant)
	if err != nil {
		return nil, err
	}
	content := withoutFromLine(raw)
	if !looksLikeMessage(content) {
		return nil, ErrNotMessage
	}
	root, _, _, err := a.parser.readParts(content, true)
	if err != nil {
		return nil, fmt.Errorf("message %d: %w", id, err)
	}
	decodeParts(root, messageCharsets(root))
	env, err := a.parser.sortParts(root)
	if err != nil {
		return nil, fmt.Errorf("message %d: parse mime: %w", id, err)
	}
	return env, nil
}

// validText is s as valid UTF-8 (raw bytes read as windows-1252, as the text view does).
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(charset.Text([]byte(s)))
}
