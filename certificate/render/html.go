// Package render turns an erasure certificate body into what people read: the printable
// HTML page and, through a Gotenberg-compatible service, its PDF. It is kept apart from
// package certificate (the body, the bundle and their verification) so that the code that
// derives and checks certificates (the projections, the verifier) never pulls in
// templates or an HTTP client.
package render

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/eventstore"
)

//go:embed templates/certificate.html
var templates embed.FS

var page = template.Must(template.New("certificate.html").Funcs(template.FuncMap{"date": displayDate}).
	ParseFS(templates, "templates/certificate.html"))

// View is what the HTML certificate shows: the body, its hash and the ledger's key.
type View struct {
	Body certificate.Body
	Hash string
	// KeyName is the name in the ledger's verifier key (the checkpoint origin).
	KeyName string
	// KeyFingerprint is KeyFingerprint of the ledger's verifier key.
	KeyFingerprint string
}

// NewView returns the view of body signed by the ledger whose signed-note verifier key
// text is publicKey.
func NewView(body certificate.Body, publicKey string) (View, error) {
	hash, err := body.Hash()
	if err != nil {
		return View{}, err
	}
	name, _, _ := strings.Cut(publicKey, "+")
	return View{Body: body, Hash: hash, KeyName: name, KeyFingerprint: KeyFingerprint(publicKey)}, nil
}

// KeyFingerprint is the fingerprint that certificates print for the ledger's public key:
// the lower-case hex SHA-256 of its signed-note verifier key text
// ("<name>+<key hash>+<base64 key>", without a trailing newline). Anyone holding the key
// recomputes it with `printf %s "$KEY" | sha256sum`.
func KeyFingerprint(publicKey string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(publicKey)))
	return hex.EncodeToString(sum[:])
}

// HTML renders the printable, one-page A4 certificate. It loads nothing from elsewhere:
// the style is inline and there are no images, scripts or fonts to fetch.
func HTML(v View) ([]byte, error) {
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return nil, fmt.Errorf("certificate html: %w", err)
	}
	return buf.Bytes(), nil
}

// displayDate shows a body time (eventstore.TimeFormat) to the second, in UTC.
func displayDate(s string) string {
	t, err := time.Parse(eventstore.TimeFormat, s)
	if err != nil {
		return s
	}
	return t.Format("2006-01-02 15:04:05 UTC")
}
