package analyzer

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// addrCorpusDir is the mail corpus beside the project root (where archivetest.CorpusDir
// finds it; that package is not imported so that the archive may import this one); the
// tests skip when it is absent.
func addrCorpusDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "shared", "corpus")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("SKIP: corpus not found at %s", dir)
	}
	return dir
}

// testFields splits a message's header the way a tolerant caller does: a line that
// starts with white space, or that has no colon (a folded line that lost its white
// space, as in RFC 5322 A.6.3 printed with "__"), continues the field above it; an
// mbox "From " line is skipped; the name keeps any white space before the colon.
func testFields(t *testing.T, msg string) []Field {
	t.Helper()
	msg = strings.ReplaceAll(msg, "\r\n", "\n")
	if end := strings.Index(msg, "\n\n"); end >= 0 {
		msg = msg[:end]
	}
	var fields []Field
	for i, line := range strings.Split(msg, "\n") {
		if i == 0 && strings.HasPrefix(line, "From ") && !strings.HasPrefix(strings.TrimLeft(line[5:], " \t"), ":") {
			continue
		}
		colon := strings.IndexByte(line, ':')
		continuation := line != "" && (line[0] == ' ' || line[0] == '\t')
		if len(fields) > 0 && (continuation || colon < 0) {
			fields[len(fields)-1].Value += "\r\n" + line
			continue
		}
		if colon < 0 {
			continue
		}
		fields = append(fields, Field{Name: line[:colon], Value: line[colon+1:]})
	}
	return fields
}

func TestRolesCorpus(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(addrCorpusDir(t), "mail-gem")
	tests := []struct {
		file string
		want []string
	}{
		{"plain_emails/raw_email_multiple_from.eml", []string{
			"recipient Delivered-To tim@powerupdev.com",
			"sender Return-Path www-data@mangaverde.net",
			"recipient To tim@powerupdev.com", "recipient To concierge@powerupdev.com",
			"sender From tim@powerupdev.com", "sender From concierge@powerupdev.com",
		}},
		// To: "xxxxx@xxxxx" <matmail> has no address: the name is not one, matmail has no domain.
		{"mime_emails/raw_email11.eml", []string{"sender From xxxxx@xxxxx"}},
		{"rfc2822/example10.eml", []string{
			"sender From pete@silly.test",
			"recipient To c@public.example", "recipient To joe@example.org", "recipient To jdoe@one.test",
		}},
		{"rfc2822/example11.eml", []string{
			"sender From john.q.public@example.com",
			"recipient To mary@example.net", "recipient To jdoe@test.example",
		}},
		{"rfc2822/example13.eml", []string{"sender From jdoe@machine.example", "recipient To mary@example.net"}},
		{"rfc6532/utf8_headers.eml", []string{
			"sender From jdöe@xn--mchine-bua.example", "recipient To märy@xn--exmple-cua.net",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join(dir, tt.file))
			require.NoError(t, err)
			assert.Equal(t, tt.want, roleStrings(Roles(testFields(t, string(raw)))))
		})
	}
}

// TestRolesWholeCorpusKeysAreCanonical runs the rule over every corpus file: every key
// it finds is its own normal form, and no display name is taken for an address.
func TestRolesWholeCorpusKeysAreCanonical(t *testing.T) {
	t.Parallel()
	root := addrCorpusDir(t)
	n := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.EqualFold(d.Name(), "README.md") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, a := range Roles(testFields(t, string(raw))) {
			n++
			key, err := Normalize(a.Key)
			if assert.NoError(t, err, "%s: %s", path, a.Key) {
				assert.Equal(t, a.Key, key, "%s: key not canonical", path)
			}
			assert.NotEmpty(t, DomainOf(a.Key), "%s: %s", path, a.Key)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Positive(t, n)
}
