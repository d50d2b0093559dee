package archive_test

import (
	"crypto/md5"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
)

// TestParseLeanMatchesParse: the lean parse of ReadDocument gives what ParseChecked gives
// of every field a reader of documents writes (text, attachments, header fields, the
// note), and the MD5 of each attachment; only the warnings and the spam flag, which no
// such reader reads, are left out. Over the corpus and generated messages (raw 8-bit
// headers, HTML only, nested past the bounds, not a message).
func TestParseLeanMatchesParse(t *testing.T) {
	p := archive.NewParser("X-Spam-Flag: YES")
	inputs := map[string][]byte{}
	for _, path := range archivetest.CorpusFiles(t) {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		inputs[path] = raw
	}
	inputs["latin-1 subject, spam"] = []byte("From: a@x.test\r\nX-Spam-Flag: YES\r\nSubject: Forma\xe7\xe3o\r\nDate: nonsense\r\n\r\nbody\xe9\r\n")
	inputs["html only"] = mimeMessage("text/html; charset=utf-8", "quoted-printable", "<p>Hello=20<b>world</b></p>")
	inputs["not a message"] = []byte("\x00\x01 not mail")
	var nested strings.Builder
	nested.WriteString("From: a@x.test\r\nContent-Type: multipart/mixed; boundary=b0\r\n\r\n")
	for i := range archive.MaxPartDepth + 5 {
		fmt.Fprintf(&nested, "--b%d\r\nContent-Type: multipart/mixed; boundary=b%d\r\n\r\n", i, i+1)
	}
	inputs["nested past the bounds"] = []byte(nested.String())
	attachments := 0
	for name, raw := range inputs {
		digest := sha256.Sum256(raw)
		want, wantErr := p.ParseChecked(raw, digest)
		got, sums, err := p.ParseLean(raw, digest)
		if wantErr != nil {
			assert.Equal(t, wantErr.Error(), fmt.Sprint(err), name)
			continue
		}
		require.NoError(t, err, name)
		want.Warnings, want.Spam = nil, false
		assert.Equal(t, want, got, name)
		require.Len(t, sums, len(got.Attachments), name)
		for i, a := range got.Attachments {
			assert.Equal(t, md5.Sum(a.Content), sums[i], "%s attachment %d", name, i+1)
			attachments++
		}
	}
	assert.Positive(t, attachments, "attachments compared")
}
