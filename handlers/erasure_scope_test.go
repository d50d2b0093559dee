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
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// This file counts an erasure's scope in the corpus without the archive's parser: the
// headers with net/mail, the attachments with mime/multipart, so that the API's numbers
// are checked against an independent reading (docs/api.md).

// corpusScope is what an erasure of one address affects in the corpus.
type corpusScope struct {
	sender, recipient, attachments int
	files                          []string // the affected files, one per distinct message
}

// countCorpusScope reads files (duplicates by SHA-256 counted once, as the archive stores
// them) and counts the messages whose sender, or one of whose To, Cc or Bcc recipients,
// is addr. A file that mentions addr but whose header net/mail cannot read fails the
// test: it could not be judged independently.
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
		if !bytes.Contains(bytes.ToLower(raw), []byte(addr)) {
			continue
		}
		msg, err := mail.ReadMessage(bytes.NewReader(skipMboxLine(raw)))
		require.NoError(t, err, "%s names %s but its header does not parse", path, addr)
		sends := firstAddress(msg.Header, "From") == addr ||
			firstAddress(msg.Header, "From") == "" && firstAddress(msg.Header, "Sender") == addr
		receives := false
		for _, h := range []string{"To", "Cc", "Bcc"} {
			receives = receives || contains(headerAddresses(msg.Header, h), addr)
		}
		if !sends && !receives {
			continue
		}
		out.files = append(out.files, path)
		out.sender += boolInt(sends)
		out.recipient += boolInt(receives)
		out.attachments += countAttachments(t, textproto.MIMEHeader(msg.Header), msg.Body)
	}
	return out
}

func skipMboxLine(raw []byte) []byte {
	if bytes.HasPrefix(raw, []byte("From ")) {
		_, rest, _ := bytes.Cut(raw, []byte("\n"))
		return rest
	}
	return raw
}

// addressToken finds addr-specs in a header that net/mail cannot read as a list.
var addressToken = regexp.MustCompile(`[^\s<>,;"'()]+@[^\s<>,;"'()]+`)

// headerAddresses returns the lower-cased addresses of a header: the parsed list, or,
// when the header does not parse (a display name with an @, say), every token that looks
// like an address.
func headerAddresses(h mail.Header, name string) []string {
	value := h.Get(name)
	if strings.TrimSpace(value) == "" {
		return nil
	}
	var out []string
	if list, err := h.AddressList(name); err == nil {
		for _, a := range list {
			out = append(out, strings.ToLower(a.Address))
		}
		return out
	}
	for _, tok := range addressToken.FindAllString(value, -1) {
		out = append(out, strings.ToLower(tok))
	}
	return out
}

func firstAddress(h mail.Header, name string) string {
	if list := headerAddresses(h, name); len(list) > 0 {
		return list[0]
	}
	return ""
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
