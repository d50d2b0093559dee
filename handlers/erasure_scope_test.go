package handlers_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/analyzer"
)

// This file counts an erasure's scope in the corpus without the archive's parser: the
// address roles with analyzer.Roles over a header split here, the attachments with
// net/mail and mime/multipart, so that the API's numbers are checked against an
// independent reading of the address rule (docs/api.md, docs/address-rule.md).

// corpusScope is what an erasure of one address affects in the corpus.
type corpusScope struct {
	sender, recipient, attachments int
	files                          []string // the affected files, one per distinct message
}

// countCorpusScope reads files (duplicates by SHA-256 counted once, as the archive stores
// them) and counts the messages in which addr (a key) has the sender or the recipient
// role. A file in which addr has a role but whose header net/mail cannot read fails the
// test: its attachments could not be counted independently.
func countCorpusScope(t *testing.T, files []string, addr string) corpusScope {
	t.Helper()
	var out corpusScope
	seen := map[[32]byte]bool{}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		if sum := sha256.Sum256(raw); seen[sum] {
			continue
		} else {
			seen[sum] = true
		}
		sends, receives := false, false
		for _, a := range analyzer.Roles(splitHeader(string(skipMboxLine(raw)))) {
			sends = sends || a.Role == analyzer.Sender && a.Key == addr
			receives = receives || a.Role == analyzer.Recipient && a.Key == addr
		}
		if !sends && !receives {
			continue
		}
		msg, err := mail.ReadMessage(bytes.NewReader(skipMboxLine(raw)))
		require.NoError(t, err, "%s names %s but its header does not parse", path, addr)
		out.files = append(out.files, path)
		out.sender += boolInt(sends)
		out.recipient += boolInt(receives)
		out.attachments += countAttachments(t, textproto.MIMEHeader(msg.Header), msg.Body)
	}
	return out
}

// splitHeader splits a message's header into fields as a tolerant reader does: a line
// that starts with white space or has no colon continues the field above; the name keeps
// any white space before its colon.
func splitHeader(msg string) []analyzer.Field {
	msg = strings.ReplaceAll(msg, "\r\n", "\n")
	if end := strings.Index(msg, "\n\n"); end >= 0 {
		msg = msg[:end]
	}
	var fields []analyzer.Field
	for _, line := range strings.Split(msg, "\n") {
		colon := strings.IndexByte(line, ':')
		continuation := line != "" && (line[0] == ' ' || line[0] == '\t')
		if len(fields) > 0 && (continuation || colon < 0) {
			fields[len(fields)-1].Value += "\r\n" + line
		} else if colon >= 0 {
			fields = append(fields, analyzer.Field{Name: line[:colon], Value: line[colon+1:]})
		}
	}
	return fields
}

func skipMboxLine(raw []byte) []byte {
	if bytes.HasPrefix(raw, []byte("From ")) && !bytes.HasPrefix(bytes.TrimLeft(raw[5:], " \t"), []byte(":")) {
		_, rest, _ := bytes.Cut(raw, []byte("\n"))
		return rest
	}
	return raw
}

// countAttachments counts the parts of a message that are attachments: a part with
// Content-Disposition attachment, or with a file name (disposition filename, RFC 2231
// continuations included, or Content-Type name). Multiparts are walked recursively;
// an attached message/rfc822 counts as one attachment.
func countAttachments(t *testing.T, h textproto.MIMEHeader, body io.Reader) int {
	t.Helper()
	mediaType, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") {
		return 0
	}
	r := multipart.NewReader(body, params["boundary"])
	n := 0
	for {
		part, err := r.NextRawPart()
		if err == io.EOF {
			return n
		}
		require.NoError(t, err)
		if isAttachment(part.Header) {
			n++
			continue
		}
		n += countAttachments(t, part.Header, bufio.NewReader(part))
	}
}

func isAttachment(h textproto.MIMEHeader) bool {
	disposition, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	_, tparams, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return disposition == "attachment" || dparams["filename"] != "" || tparams["name"] != ""
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
