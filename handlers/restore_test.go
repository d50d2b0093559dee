package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/internal/smtpsink"
	"github.com/mailledger/mailledger/smarthost"
)

// restoredEvent is the payload of an archive.message_restored event.
type restoredEvent struct {
	MessageID int64  `json:"message_id"`
	To        string `json:"to"`
	Smarthost string `json:"smarthost"`
	Delivered bool   `json:"delivered"`
	Error     string `json:"error"`
}

func TestRestoreToMailbox(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		sink := smtpsink.Start(t, smtpsink.Options{RejectRcpt: []string{"gone@example.test"}})
		relay, err := smarthost.New(smarthost.Config{Addr: sink.Addr, From: "archive@example.test"})
		require.NoError(t, err)
		f := newGDPRFixture(t, d, func(c *app.ApplicationConfig) { c.Smarthost = relay })
		sent := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		mine := archivetest.Message("boss@example.test", []string{userAddress}, nil, "for the user", "hello", sent)
		other := archivetest.Message("boss@example.test", []string{"someone@example.test"}, nil, "not for the user", "hi", sent)
		ids := f.archiveMail("default", mine, other)
		restore := func(user string, id int64, body string) (*http.Response, []byte) {
			return f.postAs(user, fmt.Sprintf("/api/v1/messages/%d/restore", id), body)
		}

		resp, body := restore(auditorUser, ids[1], `{"to":"Legal@EXAMPLE.test"}`)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		var out struct {
			MessageID int64  `json:"message_id"`
			To        string `json:"to"`
			Delivered bool   `json:"delivered"`
		}
		require.NoError(t, json.Unmarshal(body, &out))
		assert.Equal(t, ids[1], out.MessageID)
		assert.Equal(t, "legal@example.test", out.To, "the address rule's form of the mailbox")
		assert.True(t, out.Delivered)
		got := sink.Messages()
		require.Len(t, got, 1)
		assert.Equal(t, string(other), string(got[0].Data), "the original bytes")
		assert.Equal(t, []string{"legal@example.test"}, got[0].To)
		assert.Equal(t, "archive@example.test", got[0].From)

		resp, body = restore(plainUser, ids[0], `{}`)
		require.Equal(t, http.StatusOK, resp.StatusCode, "a user restores their own mail to themselves: %s", body)
		assert.Equal(t, []string{userAddress}, sink.Messages()[1].To)
		assert.Equal(t, string(mine), string(sink.Messages()[1].Data))

		resp, body = restore(plainUser, ids[0], `{"to":"elsewhere@example.test"}`)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
		assert.Equal(t, "restore_target_forbidden", decodeError(t, body).Error.Code)
		resp, _ = restore(plainUser, ids[1], `{}`)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "mail the user has no part in")

		resp, body = restore(auditorUser, ids[0], `{"to":"not an address"}`)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
		e := decodeError(t, body)
		assert.Equal(t, "validation_failed", e.Error.Code)
		assert.Contains(t, e.Error.Details["fields"], "to")
		resp, body = restore(auditorUser, ids[0], `{"to":"a@b.test","cc":"x"}`)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "an unknown field: %s", body)

		resp, body = restore(auditorUser, ids[0], `{"to":"gone@example.test"}`)
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
		e = decodeError(t, body)
		assert.Equal(t, "smarthost_refused", e.Error.Code)
		assert.Contains(t, e.Error.Message, "550")
		assert.Len(t, sink.Messages(), 2, "nothing more arrived")

		events := f.restoredEvents(t)
		require.Len(t, events, 3, "every attempt that reached the smarthost is in the ledger, failed ones too")
		assert.Equal(t, restoredEvent{MessageID: ids[1], To: "legal@example.test", Smarthost: sink.Addr, Delivered: true}, events[0])
		assert.False(t, events[2].Delivered)
		assert.Contains(t, events[2].Error, "550")
	})
}

func TestRestoreWithoutSmarthost(t *testing.T) {
	t.Parallel()
	f := newGDPRFixture(t, database.SQLite)
	ids := f.archiveMail("default", archivetest.Message("boss@example.test", []string{userAddress}, nil, "s", "b", day))
	resp, body := f.postAs(auditorUser, fmt.Sprintf("/api/v1/messages/%d/restore", ids[0]), `{"to":"a@example.test"}`)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	assert.Equal(t, "smarthost_not_configured", decodeError(t, body).Error.Code)
	resp, _ = f.postAs(auditorUser, "/api/v1/messages/999999/restore", `{"to":"a@example.test"}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "an unknown message is not found first")
	assert.Empty(t, f.restoredEvents(t))
}

// restoredEvents reads the ledger's restore events, oldest first.
func (f *fixture) restoredEvents(t *testing.T) []restoredEvent {
	t.Helper()
	var out []restoredEvent
	for _, data := range dbtest.Column[string](t, f.db, `SELECT payload FROM events WHERE event_type = ? ORDER BY position`, app.EventMessageRestored) {
		var ev restoredEvent
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		out = append(out, ev)
	}
	return out
}
