package production_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/production"
)

const testJob = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"

func TestProductionDir(t *testing.T) {
	dir, err := production.Dir("/exports", "acme.test", testJob)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("/exports", "acme.test", "ediscovery", testJob), dir)
	for _, tc := range []struct{ tenant, job string }{
		{"..", testJob}, {"a/b", testJob}, {"", testJob}, {".hidden", testJob}, {"acme..x", testJob},
		{"acme", "../../etc"}, {"acme", strings.ToUpper(testJob)}, {"acme", testJob + "x"}, {"acme", ""},
	} {
		_, err := production.Dir("/exports", tc.tenant, tc.job)
		assert.ErrorIs(t, err, production.ErrInvalid, "tenant %q job %q", tc.tenant, tc.job)
	}
}

func TestCustodianFolder(t *testing.T) {
	for in, want := range map[string]string{
		"alice@example.test":         "alice@example.test",
		"Bob.Smith+tag@Example.TEST": "bob.smith+tag@example.test",
		"../../etc/passwd@x":         "_.._etc_passwd@x",
		"..":                         "unknown",
		"":                           "unknown",
		"ünïcode@exämple.test":       "_n_code@ex_mple.test",
		"a/b\\c@d":                   "a_b_c@d",
		strings.Repeat("a", 200):     strings.Repeat("a", 128),
		"-rf@x.test":                 "_rf@x.test",
		"+1@x.test":                  "_1@x.test",
		"@x.test":                    "_x.test",
		"=1+2@x.test":                "_1+2@x.test",
	} {
		assert.Equal(t, want, production.CustodianFolder(in), "custodian %q", in)
	}
}

func TestAttachmentExt(t *testing.T) {
	for _, tc := range []struct{ name, typ, want string }{
		{"report.PDF", "application/octet-stream", "pdf"},
		{"archive.tar.gz", "", "gz"},
		{"noext", "application/pdf", "pdf"},
		{"", "image/jpeg", "jpg"},
		{"weird.ex e", "text/plain", "txt"},
		{"../../evil.sh/..", "", "bin"},
		{"name.averyverylongextension", "", "bin"},
		{"", "application/x-unknown-thing", "bin"},
		{"", "", "bin"},
		{"photo.jpeg", "image/png", "jpeg"},
	} {
		assert.Equal(t, tc.want, production.AttachmentExt(tc.name, tc.typ), "name %q type %q", tc.name, tc.typ)
	}
}

// document builds a Document without the archive, as ReadDocument would return it.
func document(id int64, raw string, msg *archive.Parsed) *archive.Document {
	b := []byte(raw)
	msg.Digest = sha256.Sum256(b)
	return &archive.Document{EmailID: id, Arrived: time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC), Raw: b, Msg: msg, MD5: md5.Sum(b), SHA256: msg.Digest}
}

// TestDATQuotingAndDelimiters: values are enclosed in the qualifier, a qualifier inside
// is doubled, line breaks become the replacement; the Concordance set on request.
func TestDATQuotingAndDelimiters(t *testing.T) {
	msg := &archive.Parsed{From: "a@x.test", Subject: "line1\r\nline2\nq\u00B6x\u00FEy\rz"}
	for _, tc := range []struct {
		concordance bool
		subject     string
		field, qual string
	}{
		{false, "\u00B6line1\u00AEline2\u00AEq\u00B6\u00B6x\u00FEy\u00AEz\u00B6", "\u00FE", "\u00B6"},
		{true, "\u00FEline1\u00AEline2\u00AEq\u00B6x\u00FE\u00FEy\u00AEz\u00FE", "\x14", "\u00FE"},
	} {
		root := t.TempDir()
		p, err := production.Create(root, "acme", testJob, production.Config{
			Prefix: "P", Digits: 3, Natives: true, DAT: true, DateFormat: "eu", Concordance: tc.concordance})
		require.NoError(t, err)
		id, err := p.Add(7, document(42, "Subject: x\r\n\r\nbody\r\n", msg))
		require.NoError(t, err)
		assert.Equal(t, "P_007", id)
		_, err = p.Close()
		require.NoError(t, err)
		data, err := os.ReadFile(filepath.Join(p.Dir(), production.LoadFileDAT))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(string(data), "\r\n"), "\r\n")
		require.Len(t, lines, 2, "header and one row")
		assert.True(t, strings.HasPrefix(lines[0], tc.qual+"DOCID"+tc.qual+tc.field+tc.qual+"BEGBATES"+tc.qual), "header %q", lines[0])
		assert.Contains(t, lines[1], tc.field+tc.subject+tc.field, "subject value")
		assert.Contains(t, lines[1], "03/02/2026 04:05:06", "eu date of DATERECEIVED")
	}
}

// TestProductionManifestAndZip: the ZIP holds exactly the production's files, and the
// manifest changes when any byte of any file does.
func TestProductionManifestAndZip(t *testing.T) {
	root := t.TempDir()
	p, err := production.Create(root, "acme", testJob, production.Config{
		Prefix: "ZIP", Digits: 4, Natives: true, Text: true, Attachments: true, ByCustodian: true, CSV: true, DAT: true, DateFormat: "iso8601"})
	require.NoError(t, err)
	att := archive.Attachment{Seq: 1, Name: "a.txt", Type: "text/plain", Content: []byte("attached")}
	att.Digest = sha256.Sum256(att.Content)
	_, err = p.Add(1, document(1, "raw one", &archive.Parsed{From: "Ann@X.test", Text: "hello", Attachments: []archive.Attachment{att}}))
	require.NoError(t, err)
	_, err = p.Add(2, document(2, "raw two", &archive.Parsed{From: "bob@y.test", Text: "hi"}))
	require.NoError(t, err)
	loads, err := p.Close()
	require.NoError(t, err)
	assert.Len(t, loads, 2)

	ctx := context.Background()
	m, err := production.ReadManifest(ctx, root, "acme", testJob)
	require.NoError(t, err)
	assert.Equal(t, 7, m.Files, "2 natives, 2 texts, 1 attachment, 2 load files")
	assert.Equal(t, m, p.Manifest(), "the manifest made while writing is the one read back")
	var buf bytes.Buffer
	n, err := production.WriteZip(ctx, root, "acme", testJob, &buf)
	require.NoError(t, err)
	assert.Equal(t, int64(buf.Len()), n)
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	var names []string
	var size int64
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		size += int64(len(b))
	}
	assert.Equal(t, []string{
		"ann@x.test/ATTACHMENTS/ZIP_0001_001.txt", "ann@x.test/NATIVES/ZIP_0001.eml", "ann@x.test/TEXT/ZIP_0001.txt",
		"bob@y.test/NATIVES/ZIP_0002.eml", "bob@y.test/TEXT/ZIP_0002.txt", "loadfile.csv", "loadfile.dat",
	}, names, "entries in manifest order")
	assert.Equal(t, m.Size, size)

	native := filepath.Join(p.Dir(), "bob@y.test", "NATIVES", "ZIP_0002.eml")
	require.NoError(t, os.WriteFile(native, []byte("raw twO"), 0o600))
	changed, err := production.ReadManifest(ctx, root, "acme", testJob)
	require.NoError(t, err)
	assert.NotEqual(t, m.Hash, changed.Hash, "one changed byte changes the manifest")
	require.NoError(t, os.WriteFile(native, []byte("raw two"), 0o600))
	again, err := production.ReadManifest(ctx, root, "acme", testJob)
	require.NoError(t, err)
	assert.Equal(t, m.Hash, again.Hash, "the manifest is reproducible")
}

func TestCreateProductionRefusesBadConfig(t *testing.T) {
	root := t.TempDir()
	for _, cfg := range []production.Config{
		{Prefix: "../x", Digits: 6, CSV: true, DateFormat: "iso8601"},
		{Prefix: "P", Digits: 0, CSV: true, DateFormat: "iso8601"},
		{Prefix: "P", Digits: 6, CSV: true, DateFormat: "rfc"},
		{Prefix: "P", Digits: 6, DateFormat: "iso8601"},
	} {
		_, err := production.Create(root, "acme", testJob, cfg)
		assert.ErrorIs(t, err, production.ErrInvalid, "%+v", cfg)
	}
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing created")
}

// TestProductionAddThenAfterTheFiles: AddThen calls back once per document, after every
// one of its files is on disk (its bytes are then no longer held), and at once for a
// document with no file.
func TestProductionAddThenAfterTheFiles(t *testing.T) {
	root := t.TempDir()
	p, err := production.Create(root, "acme", testJob, production.Config{
		Prefix: "CB", Digits: 4, Natives: true, Text: true, Attachments: true, CSV: true, DateFormat: "iso8601"})
	require.NoError(t, err)
	dir, err := production.Dir(root, "acme", testJob)
	require.NoError(t, err)
	var atts []archive.Attachment
	for i := range 20 {
		a := archive.Attachment{Seq: i + 1, Name: "a.txt", Type: "text/plain", Content: bytes.Repeat([]byte{byte('a' + i)}, 64<<10)}
		a.Digest = sha256.Sum256(a.Content)
		atts = append(atts, a)
	}
	calls := make(chan []string, 10)
	onDisk := func(paths ...string) func() {
		return func() {
			var missing []string
			for _, rel := range paths {
				if fi, err := os.Stat(filepath.Join(dir, rel)); err != nil || fi.Size() == 0 {
					missing = append(missing, rel)
				}
			}
			calls <- missing
		}
	}
	files := []string{"NATIVES/CB_0001.eml", "TEXT/CB_0001.txt"}
	for _, a := range atts {
		files = append(files, "ATTACHMENTS/CB_0001_"+strings.Repeat("0", 3-len(strconv.Itoa(a.Seq)))+strconv.Itoa(a.Seq)+".txt")
	}
	_, err = p.AddThen(1, document(1, "raw one", &archive.Parsed{From: "ann@x.test", Text: "hello", Attachments: atts}), onDisk(files...))
	require.NoError(t, err)
	_, err = p.AddThen(2, document(2, "raw two", &archive.Parsed{From: "bob@y.test", Text: "hi"}), onDisk("NATIVES/CB_0002.eml", "TEXT/CB_0002.txt"))
	require.NoError(t, err)
	_, err = p.Close()
	require.NoError(t, err)
	require.Len(t, calls, 2, "one call per document, all made by Close")
	assert.Empty(t, <-calls, "every file of the document was written before the call")
	assert.Empty(t, <-calls)

	none, err := production.Create(root, "acme", testJob, production.Config{Prefix: "CB", Digits: 4, CSV: true, DateFormat: "iso8601"})
	require.NoError(t, err)
	called := 0
	_, err = none.AddThen(1, document(1, "raw", &archive.Parsed{}), func() { called++ })
	require.NoError(t, err)
	assert.Equal(t, 1, called, "no file: called at once")
	require.NoError(t, none.Abort())
}
