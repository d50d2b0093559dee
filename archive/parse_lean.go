package archive

import (
	"crypto/md5"
	"fmt"
	"unicode/utf8"

	"github.com/mailledger/mailledger/archive/charset"
)

// parseLean is ParseChecked for a reader of whole documents (ReadDocument): the same part
// tree, decoding, text, attachments and header fields, without what such a reader never
// reads and the import needs: the warnings (strings made from every part's errors), the
// spam flag and a second copy of the text. Each attachment's MD5, which the export's load
// files need, is computed in the same pass as its SHA-256, while its decoded bytes are in
// the cache, and returned beside the parse. Every field it returns is the same as through
// ParseChecked (TestParseLeanMatchesParse).
func (p *Parser) parseLean(raw []byte, digest [32]byte) (*Parsed, [][16]byte, error) {
	content := withoutFromLine(raw)
	if !looksLikeMessage(content) {
		return nil, nil, ErrNotMessage
	}
	root, note, _, err := p.readParts(content, true)
	if err != nil {
		return nil, nil, err
	}
	h := messageHeader{header: root.Header, charsets: messageCharsets(root)}
	decodeParts(root, h.charsets)
	env, err := p.sortParts(root)
	if err != nil {
		return nil, nil, fmt.Errorf("parse mime: %w", err)
	}
	out := &Parsed{Size: len(raw), Digest: digest, ParseNote: note, charsets: h.charsets}
	out.readHeaders(h)
	out.Warnings = nil // readHeaders' own (an unreadable Date or address header): not read here
	if utf8.ValidString(env.text) {
		out.Text = env.text // already a string of its own: no copy through charset.Text
	} else {
		out.Text = string(charset.Text([]byte(env.text)))
	}
	var sums [][16]byte
	out.Attachments, sums = attachmentsWithMD5(env)
	return out, sums, nil
}

// attachmentsWithMD5 is attachmentsOf with the MD5 of each attachment besides its
// SHA-256.
func attachmentsWithMD5(env *envelope) ([]Attachment, [][16]byte) {
	out := attachmentsOf(env)
	sums := make([][16]byte, len(out))
	for i, a := range out {
		sums[i] = md5.Sum(a.Content)
	}
	return out, sums
}
