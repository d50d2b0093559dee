package handlers

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
)

// The message routes read the archive. Auditors and administrators see their tenant;
// plain users see only mail they sent or received (a user without an address sees
// nothing). Every answer that shows a message, and every search, is recorded in the
// ledger by app.Messages.

// Page limits of GET /api/v1/messages.
const (
	defaultLimit = 50
	maxLimit     = 500
)

func (s *Server) messageRoutes(api *mux.Router) {
	api.Handle("/messages", withQuery(onlyGET(s.listMessages), "q", "from", "to", "tag", "attachments", "date_from", "date_to", "limit", "offset", "tenant"))
	api.Handle("/messages/{id}", withQuery(onlyGET(s.getMessage), "tenant"))
	api.Handle("/messages/{id}/raw", s.streaming(withQuery(onlyGET(s.rawMessage), "tenant")))
	api.Handle("/messages/{id}/text", withQuery(onlyGET(s.messageText), "tenant"))
	api.Handle("/messages/{id}/restore", withQuery(onlyPOST(s.restoreMessage), "tenant"))
}

// messageJSON is a message's metadata as the API shows it.
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
	// ParseNote says why the MIME part tree was read only in part; null when read whole.
	ParseNote *string `json:"parse_note"`
	// Tags are the tags header checks gave the message when it was archived.
	Tags []string `json:"tags"`
}

func messageView(m *archive.Message) messageJSON {
	v := messageJSON{ID: m.ID, MessageID: m.MessageID, From: m.From, To: nonNil(m.To), Cc: nonNil(m.Cc),
		Subject: m.Subject, Arrived: rfc3339(m.Arrived), Size: m.Size, Attachments: m.Attachments,
		Retained: rfc3339(m.Retained), ParseNote: m.ParseNote, Tags: nonNil(m.Tags)}
	if m.Sent != nil {
		sent := rfc3339(*m.Sent)
		v.Sent = &sent
	}
	return v
}

// messageListJSON is the answer of GET /api/v1/messages.
type messageListJSON struct {
	Messages []messageJSON `json:"messages"`
	Total    int           `json:"total"`
	// TotalCapped says that more than Total messages match: counting stops at
	// archive.MaxTotal.
	TotalCapped bool `json:"total_capped"`
	Limit       int  `json:"limit"`
	Offset      int  `json:"offset"`
}

// listMessages answers GET /api/v1/messages?q=&from=&to=&date_from=&date_to=&limit=&offset=,
// newest first.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	q, err := parseMessageQuery(r.URL.Query())
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	out := messageListJSON{Messages: []messageJSON{}, Limit: q.Limit, Offset: q.Offset}
	reader, msgs, ok := s.reader(w, r)
	if !ok {
		return
	}
	if reader == nil { // a plain user without an address: nothing is theirs
		writeJSON(w, http.StatusOK, out)
		return
	}
	found, total, err := msgs.Search(r.Context(), *reader, q)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	for i := range found {
		out.Messages = append(out.Messages, messageView(&found[i]))
	}
	out.Total, out.TotalCapped = min(total, archive.MaxTotal), total > archive.MaxTotal
	writeJSON(w, http.StatusOK, out)
}

// getMessage answers GET /api/v1/messages/{id} with the message's metadata.
func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) {
	reader, msgs, id, ok := s.messageRequest(w, r)
	if !ok {
		return
	}
	m, err := msgs.Get(r.Context(), *reader, id)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, messageView(m))
}

// rawMessage answers GET /api/v1/messages/{id}/raw with the original bytes, checked
// against the stored digest first: a mismatch is 500 integrity_error and nothing else.
// The bytes are streamed, not held: a file that changes while it is sent fails its check
// at the end, and the response is cut short of its Content-Length.
func (s *Server) rawMessage(w http.ResponseWriter, r *http.Request) {
	reader, msgs, id, ok := s.messageRequest(w, r)
	if !ok {
		return
	}
	raw, err := msgs.Raw(r.Context(), *reader, id)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	defer raw.Close()
	w.Header().Set("Content-Type", "message/rfc822")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%d.eml"`, id))
	w.Header().Set("Content-Length", strconv.FormatInt(raw.Size, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, raw); err != nil && r.Context().Err() == nil {
		s.logger.ErrorContext(r.Context(), "raw message cut short", "message_id", id,
			"request_id", requestID(r.Context()), "error", err.Error())
	}
}

// messageText answers GET /api/v1/messages/{id}/text with the message's text body, at
// most app.DefaultMaxTextBytes of it; X-Mailledger-Truncated: true says more was cut.
func (s *Server) messageText(w http.ResponseWriter, r *http.Request) {
	reader, msgs, id, ok := s.messageRequest(w, r)
	if !ok {
		return
	}
	view, err := msgs.Text(r.Context(), *reader, id)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	if view.Truncated {
		w.Header().Set(TruncatedHeader, "true")
	}
	writeText(w, []byte(view.Text))
}

// TruncatedHeader is set to "true" on a text view that was cut at its limit.
const TruncatedHeader = "X-Mailledger-Truncated"

// messageRequest resolves the reader and the message id of a /messages/{id} route. An id
// that is not a positive integer is not found, like a message of another tenant.
func (s *Server) messageRequest(w http.ResponseWriter, r *http.Request) (*app.Reader, *app.Messages, int64, bool) {
	id, err := strconv.ParseInt(mux.Vars(r)["id"], 10, 64)
	if err != nil || id < 1 {
		writeError(w, r, s.logger, fmt.Errorf("%w: message %q", archive.ErrNotFound, mux.Vars(r)["id"]))
		return nil, nil, 0, false
	}
	reader, msgs, ok := s.reader(w, r)
	if ok && reader == nil {
		writeError(w, r, s.logger, fmt.Errorf("%w: message %d", archive.ErrNotFound, id))
		return nil, nil, 0, false
	}
	return reader, msgs, id, ok
}

// reader returns who reads the archive: the tenant and, for a plain user, the address
// whose mail they may see. It returns a nil Reader for a user without an address, who
// may see nothing, and false after answering an error.
func (s *Server) reader(w http.ResponseWriter, r *http.Request) (*app.Reader, *app.Messages, bool) {
	msgs := s.app.Load().Messages
	if msgs == nil {
		writeError(w, r, s.logger, ErrArchiveUnavailable)
		return nil, nil, false
	}
	c := caller(r)
	tenant, err := s.tenantParam(r, c)
	if err != nil {
		writeError(w, r, s.logger, err)
		return nil, nil, false
	}
	return c.Scope.ReaderIn(tenant, metadata(r)), msgs, true
}

// parseMessageQuery reads the filters and the page of GET /api/v1/messages.
func parseMessageQuery(v url.Values) (archive.Query, error) {
	var ve ValidationError
	q := archive.Query{
		Text: queryString(v, "q", 1000, &ve),
		From: queryString(v, "from", 255, &ve),
		To:   queryString(v, "to", 255, &ve),
		Tag:  queryString(v, "tag", 255, &ve),
	}
	if _, err := analyzer.ParseQuery(q.Text); err != nil {
		ve.add("q", fmt.Sprintf("%v: at most %d words, %d bytes", err, analyzer.MaxQueryTerms, analyzer.MaxQueryBytes))
	}
	q.Attachments = queryBool(v, "attachments", &ve)
	q.DateFrom = queryDate(v, "date_from", false, &ve)
	q.DateTo = queryDate(v, "date_to", true, &ve)
	if !q.DateFrom.IsZero() && !q.DateTo.IsZero() && !q.DateFrom.Before(q.DateTo) {
		ve.add("date_from", "must be before date_to")
	}
	q.Limit = int(queryIntDefault(v, "limit", defaultLimit, 1, maxLimit, &ve))
	q.Offset = int(queryIntDefault(v, "offset", 0, 0, 1<<31-1, &ve))
	return q, ve.err()
}

// queryBool reads an optional switch: 1 or true is on; 0, false or absent is off.
func queryBool(v url.Values, name string, ve *ValidationError) bool {
	switch queryString(v, name, 5, ve) {
	case "", "0", "false":
		return false
	case "1", "true":
		return true
	}
	ve.add(name, "must be 1 (or true) or 0 (or false)")
	return false
}

// queryString reads an optional text value of at most max bytes, trimmed.
func queryString(v url.Values, name string, max int, ve *ValidationError) string {
	raw, present := v[name]
	if !present {
		return ""
	}
	if len(raw) != 1 {
		ve.add(name, "must be given once")
		return ""
	}
	s := strings.TrimSpace(raw[0])
	if len(s) > max {
		ve.add(name, fmt.Sprintf("must be at most %d bytes", max))
		return ""
	}
	return s
}

// queryIntDefault reads an optional integer between min and max; def when absent.
func queryIntDefault(v url.Values, name string, def, min, max int64, ve *ValidationError) int64 {
	if raw, present := v[name]; !present || (len(raw) == 1 && raw[0] == "") {
		return def
	}
	n := queryInt(v, name, false, min, ve)
	if n > max {
		ve.add(name, fmt.Sprintf("must be between %d and %d", min, max))
		return def
	}
	if _, bad := ve.Fields[name]; bad {
		return def
	}
	return n
}

// queryDate reads an optional RFC 3339 time or YYYY-MM-DD date (UTC midnight). As the
// end of a range (exclusive), a date means the end of that day, so that
// date_to=2026-01-31 includes the 31st.
func queryDate(v url.Values, name string, end bool, ve *ValidationError) time.Time {
	s := queryString(v, name, 64, ve)
	if s == "" {
		return time.Time{}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC()
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		ve.add(name, "must be an RFC 3339 time or a YYYY-MM-DD date")
		return time.Time{}
	}
	if end {
		t = t.AddDate(0, 0, 1)
	}
	return t
}

// rfc3339 formats t as docs/api.md does: RFC 3339 in UTC, whole seconds.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// nonNil returns s, or [] for nil, so that JSON shows an empty array.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
