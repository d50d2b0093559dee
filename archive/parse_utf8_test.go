package archive_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// assertUTF8 checks every text field of m, and of its attachments, decodes strictly.
func assertUTF8(t *testing.T, name string, m *archive.Parsed) {
	t.Helper()
	fields := map[string]string{"From": m.From, "FromDomain": m.FromDomain, "Subject": m.Subject, "MessageID": m.MessageID,
		"InReplyTo": m.InReplyTo, "References": m.References, "Text": m.Text, "ParseNote": m.ParseNote}
	for i, list := range [][]string{m.To, m.Cc, m.Bcc, m.Envelope, m.Warnings} {
		for _, v := range list {
			fields[[]string{"To", "Cc", "Bcc", "Envelope", "Warnings"}[i]] += v
		}
	}
	for _, a := range m.Attachments {
		fields["attachment name"] += a.Name
		fields["attachment type"] += a.Type
	}
	for field, v := range fields {
		assert.True(t, utf8.ValidString(v), "%s: %s is not valid UTF-8: %q", name, field, v)
	}
}

// rawHeaderMessage is a multipart message whose Subject, From display name and attachment
// file name are raw bytes (no encoded word); the text part declares charset (none if "").
func rawHeaderMessage(charset, subject, name, file string) []byte {
	ctype := "text/plain"
	if charset != "" {
		ctype += "; charset=" + charset
	}
	return []byte("From: " + name + " <sender@x.test>\r\nTo: \"" + name + "\" <rcpt@y.test>\r\nSubject: " + subject +
		"\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n" +
		"--b1\r\nContent-Type: " + ctype + "\r\nContent-Transfer-Encoding: 8bit\r\n\r\n" + subject + "\r\n" +
		"--b1\r\nContent-Type: application/octet-stream; name=\"" + file + "\"\r\nContent-Disposition: attachment; filename=\"" + file +
		"\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" + base64.StdEncoding.EncodeToString([]byte("data")) + "\r\n--b1--\r\n")
}

// TestParseRawHeaderBytes: raw 8-bit header bytes are read in the declared charset, else as
// windows-1252; subject, addresses, attachment name and text are valid UTF-8.
func TestParseRawHeaderBytes(t *testing.T) {
	cases := []struct {
		name, charset                string
		subject, display, file       string // raw bytes
		wantSubject, wantFile, wantT string
	}{
		{"latin-1", "iso-8859-1", "Forma\xe7\xe3o", "Jos\xe9", "r\xe9sum\xe9.pdf", "Formação", "résumé.pdf", "Formação"},
		{"windows-1252", "windows-1252", "\x93Caf\xe9\x94 \x80", "M\xfcller", "\x84quote\x93.txt", "“Café” €", "„quote“.txt", "“Café” €"},
		{"koi8-r", "koi8-r", "\xf0\xd2\xc9\xd7\xc5\xd4", "\xe9\xd7\xc1\xce", "\xe6\xc1\xca\xcc.doc", "Привет", "Файл.doc", "Привет"},
		{"shift_jis", "shift_jis", "\x82\xb1\x82\xf1\x82\xc9\x82\xbf\x82\xcd", "\x93\x63\x92\x86", "\x8e\x91\x97\xbf.pdf", "こんにちは", "資料.pdf", "こんにちは"},
		{"gb2312", "gb2312", "\xc4\xe3\xba\xc3", "\xd5\xc5\xc8\xfd", "\xce\xc4\xbc\xfe.xls", "你好", "文件.xls", "你好"},
		{"undeclared: windows-1252", "", "Forma\xe7\xe3o \x80", "Jos\xe9", "caf\xe9.pdf", "Formação €", "café.pdf", "Formação €"},
		{"UTF-8 as it is", "", "Formação", "José", "café.pdf", "Formação", "café.pdf", "Formação"},
	}
	p := archive.NewParser("")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, split := range []bool{true, false} {
				m, _, err := p.ParseVia(rawHeaderMessage(c.charset, c.subject, c.display, c.file), split)
				require.NoError(t, err)
				assertUTF8(t, c.name, m)
				assert.Equal(t, c.wantSubject, m.Subject, "split %v", split)
				assert.Equal(t, "sender@x.test", m.From, "split %v", split)
				assert.Equal(t, []string{"rcpt@y.test"}, m.To, "split %v", split)
				require.Len(t, m.Attachments, 1, "split %v", split)
				assert.Equal(t, c.wantFile, m.Attachments[0].Name, "split %v", split)
				assert.Equal(t, c.wantT, strings.TrimSpace(m.Text), "split %v", split)
			}
		})
	}
}

// TestParseCorpusIsUTF8: every field of every corpus message decodes strictly as UTF-8
// (the load files of an export of them all are checked where the export is written).
func TestParseCorpusIsUTF8(t *testing.T) {
	p := archive.NewParser("X-Spam-Flag: YES")
	n := 0
	for _, path := range archivetest.CorpusFiles(t) {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		m, err := p.Parse(raw)
		if err != nil {
			continue
		}
		assertUTF8(t, filepath.Base(path), m)
		n++
	}
	assert.Positive(t, n, "corpus messages parsed")
}

// TestSearchFindsDecodedSubject: the corpus message with Forma\xe7\xe3o raw in its Subject is
// stored as Formação and found by it.
func TestSearchFindsDecodedSubject(t *testing.T) {
	path := filepath.Join(archivetest.CorpusDir(t), "mail-gem", "error_emails", "invalid_subject_characters.eml")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		res := f.store(t, "default", raw)
		for _, q := range []string{"Formação", "formação", "FORMAÇÃO Frenetikpolis"} {
			msgs, total, err := f.arc.Search(context.Background(), archive.Query{Tenant: "default", Text: q})
			require.NoError(t, err)
			require.Equal(t, 1, total, "q=%q", q)
			assert.Equal(t, res[0].ID, msgs[0].ID)
			assert.Equal(t, "Formação FrenetikPolis: Mega Campanha Final Verão | Cursos de Setembro", msgs[0].Subject)
		}
	})
}
