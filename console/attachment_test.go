package console_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestAttachmentDownload: the message page lists a message's attachments, and each link
// downloads the decoded bytes as application/octet-stream with Content-Disposition
// attachment and the file name the message gave (an HTML attachment is never shown on
// the console's origin), recorded in the ledger as a view; a number the message does not
// have, and another user's message, are 404. The search's "with attachments only" finds
// only the message with them.
func TestAttachmentDownload(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		page := "<html><body><script>alert(1)</script>Quarterly report</body></html>"
		raw := "From: boss@example.test\r\nTo: " + userAddress + "\r\nSubject: two files\r\nDate: Mon, 2 Nov 2026 09:00:00 +0000\r\n" +
			"Message-ID: <files@example.test>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" +
			"--b\r\nContent-Type: text/plain\r\n\r\nSee the files.\r\n" +
			"--b\r\nContent-Type: text/html; name=\"report.html\"\r\nContent-Disposition: attachment; filename=\"report.html\"\r\n\r\n" + page + "\r\n" +
			"--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename*=UTF-8''Gr%C3%BC%C3%9Fe.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQgdGVzdA==\r\n" +
			"--b--\r\n"
		id := f.archiveMail(tenant, raw, mail("boss@example.test", "someone@example.test", "not the user's", "x"),
			mail("boss@example.test", userAddress, "no files here", "just text"))
		mine, theirs := id[0], id[1]

		b := f.login(plainUser)
		resp, body := b.get(fmt.Sprintf("/archive/messages/%d", mine))
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		assert.Contains(t, body, fmt.Sprintf(`href="/archive/messages/%d/attachments/1">report.html</a>`, mine))
		assert.Contains(t, body, fmt.Sprintf(`href="/archive/messages/%d/attachments/2">Grüße.pdf</a>`, mine))

		before := f.countEvents("archive.message_viewed")
		resp, got := b.get(fmt.Sprintf("/archive/messages/%d/attachments/1", mine))
		require.Equal(t, http.StatusOK, resp.StatusCode, got)
		assert.Equal(t, page, strings.TrimRight(got, "\r\n"))
		assert.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"))
		assert.Equal(t, `attachment; filename=report.html`, resp.Header.Get("Content-Disposition"))
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
		assert.Equal(t, before+1, f.countEvents("archive.message_viewed"), "the download is a view in the ledger")

		resp, got = b.get(fmt.Sprintf("/archive/messages/%d/attachments/2", mine))
		require.Equal(t, http.StatusOK, resp.StatusCode, got)
		assert.Equal(t, "%PDF-1.4 test", got)
		assert.Equal(t, `attachment; filename*=utf-8''Gr%C3%BC%C3%9Fe.pdf`, resp.Header.Get("Content-Disposition"))

		_, results := b.get("/archive?go=1&attachments=1")
		assert.Contains(t, results, "two files")
		assert.NotContains(t, results, "no files here", "with attachments only")
		_, results = b.get("/archive?go=1")
		assert.Contains(t, results, "no files here")

		for _, path := range []string{
			fmt.Sprintf("/archive/messages/%d/attachments/3", mine),
			fmt.Sprintf("/archive/messages/%d/attachments/0", mine),
			fmt.Sprintf("/archive/messages/%d/attachments/x", mine),
			fmt.Sprintf("/archive/messages/%d/attachments/1", theirs),
		} {
			resp, _ := b.get(path)
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		}
	})
}

// TestIntegrityMark: the message page marks a message whose stored file decrypts and
// matches its recorded SHA-256 as verified; once the file is changed on disk the page
// still shows the metadata, marked failed with the reason, and no body.
func TestIntegrityMark(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	id := f.archiveMail(tenant, mail("boss@example.test", userAddress, "integrity", "the body text"))[0]
	b := f.login(plainUser)
	resp, body := b.get(fmt.Sprintf("/archive/messages/%d", id))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `<span class="verified">✔ verified</span>`)
	assert.Contains(t, body, "the body text")

	path := filepath.Join(f.env.DataDir, "store", filepath.FromSlash(archive.MessageKey(tenant, id)))
	sealed, err := os.ReadFile(path)
	require.NoError(t, err)
	sealed[len(sealed)-1] ^= 0xff
	require.NoError(t, os.WriteFile(path, sealed, 0o600))
	resp, body = b.get(fmt.Sprintf("/archive/messages/%d", id))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `<span class="broken">✘ failed</span>`)
	assert.Contains(t, body, "authentication tag mismatch")
	assert.NotContains(t, body, "the body text")
	assert.NotContains(t, body, `id="restore"`, "nothing to restore")
}
