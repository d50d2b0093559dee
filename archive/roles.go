package archive

import (
	"bytes"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/archive/charset"
)

// The address roles of a message (docs/address-rule.md) come from analyzer.Roles over the
// top-level header fields, in order and as written; the archive keeps analyzer.Distinct of
// them (Parsed.Roles) and stores them in address_role, which the erasure scope, the legal
// holds, purge, the from= and to= search filters, a plain user's visibility and the
// custodians of an eDiscovery export read.

// Role numbers in address_role.role: analyzer's.
const (
	roleSender    = int(analyzer.Sender)
	roleRecipient = int(analyzer.Recipient)
)

// decodedFields returns the fields of content's top-level header (content without its mbox
// "From " line; headerFields) with their raw bytes read as charsets say (charset.Raw:
// UTF-8 when valid, else the message's declared charset, else windows-1252); encoded
// words are left in place: the analyzer decodes them itself, in display names only.
// Parse reads the message's address roles from them (analyzer.Roles, analyzer.Distinct).
func decodedFields(content []byte, charsets []string) []analyzer.Field {
	fields := headerFields(content[:headerEnd(content)])
	for i := range fields {
		fields[i].Value = charset.Raw(fields[i].Value, charsets...)
	}
	return fields
}

// headerFields splits a header block into fields as written, tolerating what RFC 5322's
// obsolete syntax and broken mail put there:
//   - the name keeps any white space before the colon ("From  :"), which Roles ignores;
//   - a line that starts with white space continues the field above (folding);
//   - a line without a colon continues the field above (a folded line that lost its
//     white space), except a line that is a field name whose colon was folded onto the
//     next line ("Cc" then " : a@b.example"): that starts a field;
//   - lines before the first field that have no colon are skipped.
//
// Values keep their folding (CRLF or LF and the white space after it).
func headerFields(header []byte) []analyzer.Field {
	var spans []fieldSpan
	pending := false // the last field's name is folded: its colon is on the next line
	for pos := 0; pos < len(header); {
		end := len(header)
		if nl := bytes.IndexByte(header[pos:], '\n'); nl >= 0 {
			end = pos + nl + 1
		}
		text := bytes.TrimRight(header[pos:end], "\r\n")
		if len(text) == 0 {
			break // the empty line that ends the header
		}
		continuation := text[0] == ' ' || text[0] == '\t'
		colon := bytes.IndexByte(text, ':')
		foldedName := colon < 0 && !continuation && isFieldName(text) && nextStartsWithColon(header[end:])
		last := len(spans) - 1
		switch {
		case pending && continuation && colon >= 0:
			spans[last].colon, spans[last].end = pos+colon, pos+len(text)
		case foldedName:
			spans = append(spans, fieldSpan{start: pos, colon: pos + len(text), end: pos + len(text)})
		case last >= 0 && (continuation || colon < 0):
			spans[last].end = pos + len(text)
		case colon < 0:
			// junk before the first field
		default:
			spans = append(spans, fieldSpan{start: pos, colon: pos + colon, end: pos + len(text)})
		}
		pending = foldedName
		pos = end
	}
	fields := make([]analyzer.Field, len(spans))
	for i, sp := range spans {
		fields[i] = analyzer.Field{Name: string(header[sp.start:sp.colon]), Value: string(header[min(sp.colon+1, sp.end):sp.end])}
	}
	return fields
}

// fieldSpan is where one field lies in a header: its name from start to colon, its value
// from after the colon to end (folding included, the last line break excluded).
type fieldSpan struct{ start, colon, end int }

// nextStartsWithColon reports whether the first line of rest is a continuation line whose
// text starts with ':'.
func nextStartsWithColon(rest []byte) bool {
	return len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') && bytes.HasPrefix(bytes.TrimLeft(rest, " \t"), []byte(":"))
}

// isFieldName reports whether text is a field name (RFC 5322 ftext, printable ASCII but
// ':'), with white space after it.
func isFieldName(text []byte) bool {
	name := bytes.TrimRight(text, " \t")
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		if c <= ' ' || c > '~' || c == ':' {
			return false
		}
	}
	return true
}
