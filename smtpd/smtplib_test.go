package smtpd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
)

// These tests drive the receiver with Python's smtplib, a client nobody here wrote.

func TestSmtplibPlainMessageIsArchivedWithItsEnvelope(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	msg := message("plain-1", "Hello Bob.")
	res := r.smtplib(msg, []string{"bob@example.test", "carol@example.test"}, nil)
	for _, ext := range []string{"pipelining", "8bitmime", "chunking", "size", "starttls"} {
		assert.Contains(t, res.EHLO, ext, "EHLO offers %s", ext)
	}
	require.Equal(t, 250, res.Data, res.DataText)
	assert.Contains(t, res.DataText, "Archived default/")
	ids := r.ids("default")
	require.Len(t, ids, 1)
	assert.Equal(t, msg, r.raw("default", ids[0]), "read back byte-identical")
	assert.Equal(t, []string{"bob@example.test", "carol@example.test"}, r.envelope(ids[0]))
	assert.Equal(t, 1.0, r.metric("mailledger_smtp_received_total", ""))
	assert.Equal(t, 1.0, r.metric("mailledger_smtp_stored_total", ""))
}

func TestSmtplibStartTLSWithTheSelfSignedCertificate(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	info, err := os.Stat(filepath.Join(r.dir, "tls", "smtp.key"))
	require.NoError(t, err, "the self-signed key is created at start")
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "key file mode")
	msg := message("tls-1", "Over TLS.")
	res := r.smtplib(msg, []string{"bob@example.test"}, map[string]any{"starttls": true})
	require.Equal(t, 220, res.StartTLS)
	assert.NotContains(t, res.EHLOTLS, "starttls", "not offered again inside TLS")
	require.Equal(t, 250, res.Data, res.DataText)
	ids := r.ids("default")
	require.Len(t, ids, 1)
	assert.Equal(t, msg, r.raw("default", ids[0]))
}

func TestSmtplib8BitMIMEBodyIsKeptByteForByte(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	msg := message("8bit-1", "Grüße aus Köln – 東京 ✓\r\n.a line starting with a dot",
		"MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit")
	res := r.smtplib(msg, []string{"bob@example.test"}, map[string]any{"mail_options": []string{"BODY=8BITMIME"}})
	require.Equal(t, 250, res.Data, res.DataText)
	ids := r.ids("default")
	require.Len(t, ids, 1)
	assert.Equal(t, string(msg), string(r.raw("default", ids[0])))
}

func TestSmtplibMessageOverTheSizeLimitGets552AndNothingIsStored(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, map[string]string{"SMTP_MAX_MESSAGE_BYTES": "10000"})
	res := r.smtplib(message("big-1", strings.Repeat("0123456789abcdef\r\n", 2000)), []string{"bob@example.test"}, nil)
	assert.Equal(t, 552, res.Data, res.DataText)
	assert.Equal(t, 0, r.count("default"))
	assert.Equal(t, 1.0, r.metric("mailledger_smtp_refused_total", refusedSize))
	res = r.smtplib(message("small-1", "fits"), []string{"bob@example.test"}, nil)
	assert.Equal(t, 250, res.Data, "the connection's next message: %s", res.DataText)
}

func TestSmtplibUnknownDomainIsRefusedWhenAMappingIsSet(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, map[string]string{"SMTP_TENANT_DOMAINS": "example.test=acme"})
	res := r.smtplib(message("unknown-1", "hi"), []string{"eve@elsewhere.test", "bob@EXAMPLE.test"}, nil)
	require.Equal(t, []int{550, 250}, res.Rcpt)
	require.Equal(t, 250, res.Data, res.DataText)
	ids := r.ids("acme")
	require.Len(t, ids, 1)
	assert.Equal(t, []string{"bob@example.test"}, r.envelope(ids[0]), "only the accepted recipient")
	assert.Equal(t, 0, r.count("default"))
}

func TestSmtplibUnknownDomainGoesToTheDefaultTenantWhenOneIsSet(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, map[string]string{"SMTP_TENANT_DOMAINS": "example.test=acme", "SMTP_DEFAULT_TENANT": "rest"})
	res := r.smtplib(message("default-1", "hi"), []string{"eve@elsewhere.test"}, nil)
	require.Equal(t, 250, res.Data, res.DataText)
	assert.Equal(t, 1, r.count("rest"))
}

func TestSmtplibTwoTenantsInOneMessageEachGetACopyWithTheirRecipients(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, map[string]string{"SMTP_TENANT_DOMAINS": "a.test=alpha, b.test=beta"})
	msg := message("two-1", "for both")
	res := r.smtplib(msg, []string{"x@a.test", "y@b.test", "z@a.test"}, nil)
	require.Equal(t, 250, res.Data, res.DataText)
	alpha, beta := r.ids("alpha"), r.ids("beta")
	require.Len(t, alpha, 1)
	require.Len(t, beta, 1)
	assert.Equal(t, []string{"x@a.test", "z@a.test"}, r.envelope(alpha[0]))
	assert.Equal(t, []string{"y@b.test"}, r.envelope(beta[0]))
	assert.Equal(t, msg, r.raw("alpha", alpha[0]))
	assert.Equal(t, msg, r.raw("beta", beta[0]))
}

func TestSmtplibDuplicateResendIsStoredOnce(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	msg := message("dup-1", "sent twice")
	for i := 0; i < 2; i++ {
		res := r.smtplib(msg, []string{"bob@example.test"}, nil)
		require.Equal(t, 250, res.Data, res.DataText)
	}
	assert.Equal(t, 1, r.count("default"))
	assert.Equal(t, 1.0, r.metric("mailledger_smtp_duplicates_total", ""))
}

func TestSmtplibTooManyRecipientsGet452(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, map[string]string{"SMTP_MAX_RECIPIENTS": "3"})
	res := r.smtplib(message("many-1", "hi"), []string{"a@x.test", "b@x.test", "c@x.test", "d@x.test"}, nil)
	assert.Equal(t, []int{250, 250, 250, 452}, res.Rcpt)
	require.Equal(t, 250, res.Data, res.DataText)
	ids := r.ids("default")
	require.Len(t, ids, 1)
	assert.Len(t, r.envelope(ids[0]), 3)
}

func TestSmtplibNotAMessageGets554AndNothingIsStored(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	res := r.smtplib([]byte("this is no mail at all\r\n"), []string{"bob@example.test"}, nil)
	assert.Equal(t, 554, res.Data, res.DataText)
	assert.Contains(t, res.DataText, "not an email message")
	assert.Equal(t, 0, r.count("default"))
}

func TestSmtplibCommitFailureGets451(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	require.NoError(t, r.db.Close()) // the database is gone: the commit fails
	res := r.smtplib(message("fail-1", "hi"), []string{"bob@example.test"}, nil)
	assert.Equal(t, 451, res.Data, res.DataText)
	assert.Equal(t, 1.0, r.metric("mailledger_smtp_refused_total", refusedCommit))
}

func TestSmtplibLongLinesArePassedAsSent(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	msg := message("long-1", strings.Repeat("y", 5000)+"\r\nshort line")
	res := r.smtplib(msg, []string{"bob@example.test"}, nil)
	require.Equal(t, 250, res.Data, res.DataText)
	ids := r.ids("default")
	require.Len(t, ids, 1)
	assert.Equal(t, msg, r.raw("default", ids[0]))
}

func TestSmtplibSpamUnderTheDiscardPolicyIsAcceptedAndNotStored(t *testing.T) {
	t.Parallel()
	r := startReceiverWith(t, nil, archive.Options{SpamHeader: "X-Spam-Flag: YES", DiscardSpam: true})
	res := r.smtplib(message("spam-1", "buy now", "X-Spam-Flag: YES"), []string{"bob@example.test"}, nil)
	require.Equal(t, 250, res.Data, res.DataText)
	assert.Contains(t, res.DataText, "discarded")
	assert.Equal(t, 0, r.count("default"))
	assert.Equal(t, 1.0, r.metric("mailledger_smtp_discarded_total", ""))
}

func TestSmtplibSpamUnderTheKeepPolicyIsStoredWithItsRetention(t *testing.T) {
	t.Parallel()
	const week = 7 * 24 * time.Hour
	r := startReceiverWith(t, nil, archive.Options{SpamHeader: "X-Spam-Flag: YES", SpamRetention: week})
	res := r.smtplib(message("spam-2", "buy now", "X-Spam-Flag: YES"), []string{"bob@example.test"}, nil)
	require.Equal(t, 250, res.Data, res.DataText)
	ids := r.ids("default")
	require.Len(t, ids, 1)
	m, err := r.arc.Get(context.Background(), "default", ids[0])
	require.NoError(t, err)
	assert.True(t, m.Spam, "marked as spam")
	assert.WithinDuration(t, m.Arrived.Add(week), m.Retained, time.Second, "kept for SPAM_RETENTION_DAYS")
}

func TestSmtplibBrokenMIMEIsStillArchivedAsItCame(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	msg := message("broken-1", "--b1\r\nContent-Type: text/plain\r\n\r\npart without its closing boundary",
		"MIME-Version: 1.0", `Content-Type: multipart/mixed; boundary="b1"`)
	res := r.smtplib(msg, []string{"bob@example.test"}, nil)
	require.Equal(t, 250, res.Data, res.DataText)
	ids := r.ids("default")
	require.Len(t, ids, 1)
	assert.Equal(t, msg, r.raw("default", ids[0]))
}
