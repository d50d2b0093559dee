package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/handlers"
)

// messageJSON is a message's metadata as the API answers it.
type messageJSON struct {
	ID          int64    `json:"id"`
	MessageID   string   `json:"message_id"`
	From        string   `json:"from"`
	To          []string `json:"to"`
	Cc          []string `json:"cc"`
	Subject     string   `json:"subject"`
	Sent        *string  `json:"sent"`
	Arrived     string   `json:"arrived"`
	Size        int64    `json:"size"`
	Attachments int      `json:"attachments"`
	Retained    string   `json:"retained"`
}

type messageList struct {
	Messages []messageJSON `json:"messages"`
	Total    int           `json:"total"`
	Limit    int           `json:"limit"`
	Offset   int           `json:"offset"`
}

// mailbox is a handful of messages with known senders, recipients, dates and words.
type mailbox struct {
	raws [][]byte
	ids  []int64
}

var day = time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)

func newMailbox(f *fixture) *mailbox {
	m := &mailbox{raws: [][]byte{
		archivetest.Message("alice@example.test", []string{userAddress}, nil, "quarterly budget", "the budget numbers", day),
		archivetest.Message("bob@other.test", []string{"carol@example.test"}, []string{userAddress}, "holiday party", "bring snacks", day.AddDate(0, 0, 1)),
		archivetest.Message(userAddress, []string{"bob@other.test"}, nil, "merger rumours", "keep it quiet", day.AddDate(0, 0, 2)),
		archivetest.Message("carol@example.test", []string{"dave@example.test"}, nil, "budget review", "second budget thread", day.AddDate(0, 0, 3)),
		archivetest.WithAttachment("dave@example.test", "alice@example.test", "contract draft", "see attached", "draft.pdf", []byte("%PDF-1.4 draft"), day.AddDate(0, 0, 4)),
	}}
	m.ids = f.archiveMail("default", m.raws...)
	return m
}

// list lists messages as user with query and returns the subjects found.
func (f *fixture) list(user string, query url.Values) messageList {
	f.t.Helper()
	resp, raw := f.getAs(user, "/api/v1/messages?"+query.Encode())
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "list %s: %s", query.Encode(), raw)
	var l messageList
	decode(f.t, raw, &l)
	require.NotNil(f.t, l.Messages, "messages is [], never null")
	return l
}

func subjects(l messageList) []string {
	out := []string{}
	for _, m := range l.Messages {
		out = append(out, m.Subject)
	}
	return out
}

func TestMessageSearchOverHTTP(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		newMailbox(f)
		cases := []struct {
			user  string
			query url.Values
			want  []string // newest first
		}{
			{auditorUser, nil, []string{"contract draft", "budget review", "merger rumours", "holiday party", "quarterly budget"}},
			{auditorUser, url.Values{"q": {"budget"}}, []string{"budget review", "quarterly budget"}},
			{auditorUser, url.Values{"q": {"snacks"}}, []string{"holiday party"}},
			{auditorUser, url.Values{"q": {"contract"}}, []string{"contract draft"}},
			{auditorUser, url.Values{"from": {"Carol@Example.test"}}, []string{"budget review"}},
			{auditorUser, url.Values{"from": {"@other.test"}}, []string{"holiday party"}},
			{auditorUser, url.Values{"to": {"alice@example.test"}}, []string{"contract draft"}},
			{auditorUser, url.Values{"to": {userAddress}}, []string{"holiday party", "quarterly budget"}},
			{auditorUser, url.Values{"date_from": {"2026-01-11"}, "date_to": {"2026-01-12"}}, []string{"merger rumours", "holiday party"}},
			{auditorUser, url.Values{"date_from": {"2026-01-13T12:00:00Z"}}, []string{"contract draft", "budget review"}},
			{auditorUser, url.Values{"date_to": {"2026-01-11T12:00:00Z"}}, []string{"quarterly budget"}},
			{auditorUser, url.Values{"q": {"budget"}, "from": {"alice@example.test"}}, []string{"quarterly budget"}},
			{auditorUser, url.Values{"attachments": {"1"}}, []string{"contract draft"}},
			{auditorUser, url.Values{"attachments": {"true"}, "q": {"budget"}}, []string{}},
			{auditorUser, url.Values{"attachments": {"0"}, "q": {"budget"}}, []string{"budget review", "quarterly budget"}},
			{adminUser, url.Values{"q": {"nothing-matches-this"}}, []string{}},
			{plainUser, nil, []string{"merger rumours", "holiday party", "quarterly budget"}},
			{plainUser, url.Values{"q": {"budget"}}, []string{"quarterly budget"}},
			{noMailUser, nil, []string{}},
		}
		for _, tc := range cases {
			l := f.list(tc.user, tc.query)
			assert.Equal(t, tc.want, subjects(l), "%s: %s", tc.user, tc.query.Encode())
			assert.Equal(t, len(tc.want), l.Total, "%s: %s", tc.user, tc.query.Encode())
		}
		page := f.list(auditorUser, url.Values{"limit": {"2"}, "offset": {"1"}})
		assert.Equal(t, []string{"budget review", "merger rumours"}, subjects(page))
		assert.Equal(t, messageList{Messages: page.Messages, Total: 5, Limit: 2, Offset: 1}, page)
		defaults := f.list(auditorUser, nil)
		assert.Equal(t, 50, defaults.Limit)
		assert.Equal(t, 0, defaults.Offset)
		searches := len(cases) + 2 - 1 // the user without an address reads nothing
		assert.Equal(t, searches, f.countEvents(app.EventMessagesSearched), "every search is in the ledger")
	})
}

func TestMessageViewsOverHTTP(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		box := newMailbox(f)
		views := 0
		for i, id := range box.ids {
			path := fmt.Sprintf("/api/v1/messages/%d", id)
			resp, raw := f.do(path+"/raw", as(auditorUser), func(r *http.Request) { r.Header.Set("X-Request-ID", fmt.Sprintf("raw-%d", i)) })
			require.Equal(t, http.StatusOK, resp.StatusCode, "raw %d: %s", id, raw)
			assert.Equal(t, "message/rfc822", resp.Header.Get("Content-Type"))
			assert.Equal(t, string(box.raws[i]), string(raw), "raw %d is byte-identical to what was archived", id)
			resp, raw = f.getAs(auditorUser, path)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			var m messageJSON
			decode(t, raw, &m)
			assert.Equal(t, id, m.ID)
			resp, raw = f.getAs(auditorUser, path+"/text")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
			assert.Contains(t, string(raw), []string{"the budget numbers", "bring snacks", "keep it quiet", "second budget thread", "see attached"}[i])
			views += 3
		}
		checkMetadataJSON(t, f, box.ids[1])
		views++
		assert.Equal(t, views, f.countEvents(app.EventMessageViewed), "every view is in the ledger")
		checkViewMetadata(t, f)
	})
}

// checkMetadataJSON checks every field of GET /api/v1/messages/{id}.
func checkMetadataJSON(t *testing.T, f *fixture, id int64) {
	t.Helper()
	resp, raw := f.getAs(plainUser, fmt.Sprintf("/api/v1/messages/%d", id))
	require.Equal(t, http.StatusOK, resp.StatusCode, "the user is in Cc: %s", raw)
	var fields map[string]json.RawMessage
	decode(t, raw, &fields)
	assert.Len(t, fields, 13, "exactly the documented fields: %s", raw)
	assert.Equal(t, "null", string(fields["parse_note"]), "read whole: no note")
	assert.Equal(t, "[]", string(fields["tags"]), "no header check tagged it")
	var m messageJSON
	decode(t, raw, &m)
	retained, err := time.Parse(time.RFC3339, m.Retained)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().AddDate(0, 0, 3650), retained, 48*time.Hour, "default retention is 3650 days")
	sent := day.AddDate(0, 0, 1).Format(time.RFC3339)
	assert.Equal(t, messageJSON{ID: id, MessageID: m.MessageID, From: "bob@other.test", To: []string{"carol@example.test"},
		Cc: []string{userAddress}, Subject: "holiday party", Sent: &sent, Arrived: m.Arrived, Size: m.Size,
		Retained: m.Retained}, m)
	assert.NotEmpty(t, m.MessageID)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`, m.Arrived)
	assert.Positive(t, m.Size)
}

// checkViewMetadata requires the first raw view's event to name its reader.
func checkViewMetadata(t *testing.T, f *fixture) {
	t.Helper()
	var payload, meta []byte
	var tenant string
	err := f.db.QueryRow(f.db.Rebind(`SELECT tenant_id, payload, metadata FROM events WHERE event_type = ? ORDER BY position LIMIT 1`),
		app.EventMessageViewed).Scan(&tenant, &payload, &meta)
	require.NoError(t, err)
	var md domain.Metadata
	require.NoError(t, json.Unmarshal(meta, &md))
	assert.Equal(t, domain.Metadata{Actor: auditorUser, ClientIP: "127.0.0.1", UserAgent: "Go-http-client/1.1", CorrelationID: "raw-0"}, md)
	assert.Equal(t, "default", tenant)
	assert.Contains(t, string(payload), `"view":"raw"`)
	assert.NotContains(t, string(payload), "budget", "no message content in the ledger")
}

func TestMessageQueryErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	cases := []struct{ query, field string }{
		{"limit=0", "limit"},
		{"limit=501", "limit"},
		{"limit=ten", "limit"},
		{"offset=-1", "offset"},
		{"offset=1.5", "offset"},
		{"date_from=yesterday", "date_from"},
		{"date_to=2026-13-01", "date_to"},
		{"date_from=2026-02-01&date_to=2026-01-01", "date_from"},
		{"date_from=2026-01-01T00:00:00", "date_from"},
		{"q=a&q=b", "q"},
		{"q=" + url.QueryEscape(strings.Repeat("w ", 16)+"a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 6"), "q"}, // 33 distinct words
		{"tenant=acme.test", "tenant"},
		{"attachments=yes", "attachments"},
	}
	for _, tc := range cases {
		resp, raw := f.get("/api/v1/messages?" + tc.query)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", tc.query, raw)
		e := decodeError(t, raw)
		assert.Equal(t, "validation_failed", e.Error.Code, tc.query)
		fields, ok := e.Error.Details["fields"].(map[string]any)
		require.True(t, ok, "%s: details.fields in %s", tc.query, raw)
		assert.Contains(t, fields, tc.field, tc.query)
	}
	for _, good := range []string{"limit=500", "limit=1&offset=0", "date_from=2026-01-01T00:00:00%2B02:00", "date_to=2026-01-01", "tenant=default"} {
		resp, raw := f.get("/api/v1/messages?" + good)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", good, raw)
	}
	assert.Equal(t, 5, f.countEvents(app.EventMessagesSearched), "refused searches are not run")
}

func TestUnknownMessagesAre404(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	box := newMailbox(f)
	_, err := f.db.Exec(`UPDATE metadata SET deleted = 1 WHERE id = ?`, box.ids[0])
	require.NoError(t, err)
	for _, path := range []string{"abc", "0", "-1", "99999", fmt.Sprint(box.ids[0]), fmt.Sprint(box.ids[0]) + "/raw", fmt.Sprint(box.ids[0]) + "/text"} {
		resp, raw := f.get("/api/v1/messages/" + path)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s: %s", path, raw)
		assert.Equal(t, "not_found", decodeError(t, raw).Error.Code)
	}
	assert.NotContains(t, subjects(f.list(auditorUser, nil)), "quarterly budget", "a purged message is not listed")
	resp, raw := f.do("/api/v1/messages", as(adminUser), withBody(http.MethodPost, "{}"))
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "body %s", raw)
	assert.Zero(t, f.countEvents(app.EventMessageViewed), "nothing was shown")
}

// TestTextViewIsCutWithAFlag: the text of a message longer than 1 MiB is cut there, at a
// character boundary, with X-Mailledger-Truncated: true; a short one is whole, without it.
// The raw view of the long message is whole.
func TestTextViewIsCutWithAFlag(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	var body strings.Builder
	for body.Len() < 3<<19 {
		body.WriteString("une ligne de texte accentué, longue ✓\r\n")
	}
	long := archivetest.Message("alice@example.test", []string{userAddress}, nil, "long", body.String(), day)
	short := archivetest.Message("alice@example.test", []string{userAddress}, nil, "short", "brief", day)
	ids := f.archiveMail("default", long, short)

	resp, text := f.getAs(auditorUser, fmt.Sprintf("/api/v1/messages/%d/text", ids[0]))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", text)
	assert.Equal(t, "true", resp.Header.Get(handlers.TruncatedHeader))
	assert.LessOrEqual(t, len(text), app.DefaultMaxTextBytes)
	assert.Greater(t, len(text), app.DefaultMaxTextBytes-8)
	assert.True(t, utf8.Valid(text), "the cut splits a character")

	resp, text = f.getAs(auditorUser, fmt.Sprintf("/api/v1/messages/%d/text", ids[1]))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, resp.Header.Values(handlers.TruncatedHeader))
	assert.Contains(t, string(text), "brief")

	resp, raw := f.getAs(auditorUser, fmt.Sprintf("/api/v1/messages/%d/raw", ids[0]))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, long, raw)
	assert.Equal(t, fmt.Sprint(len(long)), resp.Header.Get("Content-Length"))
}
