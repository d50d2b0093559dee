package archive

import "strings"

// ParseVia is Parse for the tests: with split, the part tree comes from the splitter when it
// takes the message, without, from enmime's ReadParts alone. declined says why the splitter
// left the message to enmime (nil when it took it or was not asked).
func (p *Parser) ParseVia(raw []byte, split bool) (m *Parsed, declined, err error) {
	return p.parse(raw, split)
}

// SplitMultipart runs the splitter alone on raw and reports whether it cut a multipart
// body into parts (rather than taking a single-part message or declining).
func (p *Parser) SplitMultipart(raw []byte) bool {
	root, _, err := p.splitParts(withoutFromLine(raw), false)
	return err == nil && strings.HasPrefix(root.ContentType, "multipart/")
}

// ParseLean is the lean parse of ReadDocument for the tests: the Parsed and the
// attachments' MD5s.
func (p *Parser) ParseLean(raw []byte, digest [32]byte) (*Parsed, [][16]byte, error) {
	return p.parseLean(raw, digest)
}
