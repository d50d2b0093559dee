package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/internal/smtpsink"
	"github.com/mailledger/mailledger/smarthost"
)

// withSink attaches the application again with restores through a test SMTP server that
// keeps what it receives.
func (f *fixture) withSink() *smtpsink.Sink {
	f.t.Helper()
	sink := smtpsink.Start(f.t, smtpsink.Options{RejectRcpt: []string{"gone@example.test"}})
	relay, err := smarthost.New(smarthost.Config{Addr: sink.Addr, From: "archive@example.test"})
	require.NoError(f.t, err)
	f.attach(relay)
	return sink
}

// TestRestoreToMailbox: from the message page through the confirm page, the original
// bytes reach the mailbox through the smarthost, and each restore is a ledger event; a
// user restores only their own mail, to themselves; another tenant's message is not
// found.
func TestRestoreToMailbox(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		sink := f.withSink()
		mine := mail("boss@example.test", userAddress, "for the user", "restore me")
		other := mail("boss@example.test", "someone@example.test", "not for the user", "someone's mail")
		ids := f.archiveMail(tenant, mine, other)
		path := func(id int64) string { return fmt.Sprintf("/archive/messages/%d", id) }

		auditor := f.login(auditorUser)
		resp, page := auditor.get(path(ids[1]))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, `action="`+path(ids[1])+`/restore"`)
		assert.Contains(t, page, `value="auditor@example.test"`, "the form is filled with the user's own address")
		resp, page = auditor.get(path(ids[1]) + "/restore?to=Legal@EXAMPLE.test")
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, page, "not for the user", "the confirm page names the message")
		assert.Contains(t, page, `value="Legal@EXAMPLE.test"`)
		assert.Contains(t, page, sink.Addr, "and the smarthost")
		require.Empty(t, sink.Messages(), "the confirm page sends nothing")

		resp, page = auditor.submit(path(ids[1])+"/restore", url.Values{"to": {"Legal@EXAMPLE.test"}})
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, page, "legal@example.test")
		assert.Contains(t, page, sink.Addr)
		got := sink.Messages()
		require.Len(t, got, 1)
		assert.Equal(t, other, string(got[0].Data), "the original bytes")
		assert.Equal(t, []string{"legal@example.test"}, got[0].To)
		assert.Equal(t, 1, f.countEvents(app.EventMessageRestored))

		user := f.login(plainUser)
		_, page = user.get(path(ids[0]))
		assert.Contains(t, page, `value="`+userAddress+`"`)
		resp, page = user.submit(path(ids[0])+"/restore", url.Values{"to": {userAddress}})
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		require.Len(t, sink.Messages(), 2)
		assert.Equal(t, mine, string(sink.Messages()[1].Data))

		resp, _ = user.submit(path(ids[1])+"/restore", url.Values{"to": {userAddress}})
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "another user's mail")
		resp, _ = user.get(path(ids[1]) + "/restore")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		resp, page = user.submit(path(ids[0])+"/restore", url.Values{"to": {"elsewhere@example.test"}})
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Contains(t, page, "only to your own address")
		resp, _ = f.login(otherAuditor).submit(path(ids[0])+"/restore", url.Values{"to": {"auditor@other.test"}})
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "another tenant's message")

		resp, page = auditor.submit(path(ids[0])+"/restore", url.Values{"to": {"not an address"}})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Contains(t, page, "not an email address")
		assert.Contains(t, page, `value="not an address"`, "the form keeps what was typed")
		resp, page = auditor.submit(path(ids[0])+"/restore", url.Values{"to": {"gone@example.test"}})
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Contains(t, page, "did not take the message")
		assert.Len(t, sink.Messages(), 2, "nothing more was delivered")
		assert.Equal(t, 3, f.countEvents(app.EventMessageRestored), "the refused attempt is recorded too")
	})
}

// TestRestoreWithoutSmarthost: without SMARTHOST_ADDR the pages say so, and the POST is
// 503 with that message, never a 500.
func TestRestoreWithoutSmarthost(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	id := f.archiveMail(tenant, mail("boss@example.test", userAddress, "hello", "x"))[0]
	b := f.login(auditorUser)
	path := fmt.Sprintf("/archive/messages/%d/restore", id)
	resp, page := b.get(path)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, page, "No smarthost is configured")
	resp, page = b.submit(path, url.Values{"to": {"legal@example.test"}})
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, page, "No smarthost is configured (SMARTHOST_ADDR)")
	assert.Zero(t, f.countEvents(app.EventMessageRestored))
}
