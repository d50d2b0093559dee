package console

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
	"github.com/mailledger/mailledger/domain"
)

// pageSize is the number of messages a result page lists.
const pageSize = 25

func (s *Server) archiveRoutes(r *mux.Router) {
	r.Handle("/archive", methods{get: s.withSession(s.search)})
	r.Handle("/archive/messages/{id}", methods{get: s.withSession(s.message)})
	r.Handle("/archive/messages/{id}/raw", methods{get: s.withSession(s.raw)})
	r.Handle("/archive/messages/{id}/attachments/{seq}", methods{get: s.withSession(s.attachment)})
}

// searchPage is the search form, its results and the links to the pages around.
type searchPage struct {
	Form       url.Values
	Searched   bool
	Messages   []archive.Message
	Total      int
	Capped     bool
	First      int
	Prev, Next string
	// CanExport shows the selection boxes and the export buttons (app.Scope.ExportTenant);
	// ExportAll is the dialog's query of every result of this search.
	CanExport bool
	ExportAll string
}

// search shows the search form and, once a search was asked for (any field given, or
// `go`), one page of results through app.Messages.Search, which records the search in
// the ledger and shows a plain user only their own mail.
func (s *Server) search(w http.ResponseWriter, r *http.Request, c *call) {
	v := r.URL.Query()
	page := searchPage{Form: v, Searched: len(v) > 0}
	if !page.Searched {
		s.render(w, r, c, http.StatusOK, "search", "Archive", page)
		return
	}
	q, err := parseSearch(v)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	if reader := c.scope.ReaderIn(c.homeTenant(), metadata(r, w, c)); reader != nil {
		msgs, total, err := c.app.Messages.Search(r.Context(), *reader, q)
		if err != nil {
			s.fail(w, r, c, err)
			return
		}
		page.Messages, page.Total, page.Capped = msgs, min(total, archive.MaxTotal), total > archive.MaxTotal
	}
	page.First = q.Offset + 1
	page.Prev, page.Next = pageLinks(v, q.Offset, len(page.Messages), page.Total)
	page.CanExport, page.ExportAll = exportLinks(c, v)
	s.render(w, r, c, http.StatusOK, "search", "Archive", page)
}

// exportLinks reports whether the caller may export, and the export dialog's query of
// every result of the search v.
func exportLinks(c *call, v url.Values) (bool, string) {
	if _, err := c.scope.ExportTenant(); err != nil || c.app.Exports == nil {
		return false, ""
	}
	q := url.Values{"search": {"1"}}
	for _, name := range []string{"q", "from", "to", "date_from", "date_to", "tag", "attachments"} {
		if val := v.Get(name); val != "" {
			q.Set(name, val)
		}
	}
	return true, "?" + q.Encode()
}

// pageLinks are the query strings of the previous and next result pages ("" when none).
func pageLinks(v url.Values, offset, shown, total int) (prev, next string) {
	link := func(off int) string {
		q := url.Values{}
		for k, vals := range v {
			q[k] = vals
		}
		q.Set("offset", strconv.Itoa(off))
		return "?" + q.Encode()
	}
	if offset > 0 {
		prev = link(max(offset-pageSize, 0))
	}
	if offset+shown < total {
		next = link(offset + pageSize)
	}
	return prev, next
}

// parseSearch reads the search form: words, sender, recipient, the dates (YYYY-MM-DD, the
// second inclusive), tag and the offset of the page.
func parseSearch(v url.Values) (archive.Query, error) {
	var ve domain.ValidationError
	field := func(name string, max int) string {
		s := strings.TrimSpace(v.Get(name))
		if len(s) > max {
			ve.Add(name, fmt.Sprintf("must be at most %d bytes", max))
			return ""
		}
		return s
	}
	q := archive.Query{Text: field("q", 1000), From: field("from", 255), To: field("to", 255), Tag: field("tag", 255),
		Attachments: v.Get("attachments") == "1", Limit: pageSize}
	if _, err := analyzer.ParseQuery(q.Text); err != nil {
		ve.Add("q", fmt.Sprintf("%v: at most %d words, %d bytes", err, analyzer.MaxQueryTerms, analyzer.MaxQueryBytes))
	}
	q.DateFrom = formDate(v.Get("date_from"), "date_from", &ve)
	if q.DateTo = formDate(v.Get("date_to"), "date_to", &ve); !q.DateTo.IsZero() {
		q.DateTo = q.DateTo.AddDate(0, 0, 1)
	}
	if !q.DateFrom.IsZero() && !q.DateTo.IsZero() && !q.DateFrom.Before(q.DateTo) {
		ve.Add("date_from", "must not be after the second date")
	}
	if off := v.Get("offset"); off != "" {
		n, err := strconv.Atoi(off)
		if err != nil || n < 0 || n > 1<<31-1 {
			ve.Add("offset", "must be a whole number, 0 or more")
		}
		q.Offset = n
	}
	return q, ve.Err()
}

// formDate reads a YYYY-MM-DD date field (zero when empty).
func formDate(s, name string, ve *domain.ValidationError) time.Time {
	if s = strings.TrimSpace(s); s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		ve.Add(name, "must be a date, YYYY-MM-DD")
	}
	return t
}

// messageID reads the {id} of a message route; anything but a positive integer is not
// found, like another tenant's message.
func messageID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(mux.Vars(r)["id"], 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("%w: message %q", archive.ErrNotFound, mux.Vars(r)["id"])
	}
	return id, nil
}

// reader is the caller reading message id, or not found for a plain user without an
// address (who may see nothing).
func reader(r *http.Request, w http.ResponseWriter, c *call) (*app.Reader, int64, error) {
	id, err := messageID(r)
	if err != nil {
		return nil, 0, err
	}
	rd := c.scope.ReaderIn(c.homeTenant(), metadata(r, w, c))
	if rd == nil {
		return nil, 0, fmt.Errorf("%w: message %d", archive.ErrNotFound, id)
	}
	return rd, id, nil
}

// rawMessage answers the original bytes of a message as a download (recorded as a view).
func (s *Server) raw(w http.ResponseWriter, r *http.Request, c *call) {
	rd, id, err := reader(r, w, c)
	if err == nil {
		var raw *app.RawMessage
		if raw, err = c.app.Messages.Raw(r.Context(), *rd, id); err == nil {
			defer raw.Close()
			w.Header().Set("Content-Type", "message/rfc822")
			w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%d.eml"`, id))
			w.Header().Set("Content-Length", strconv.FormatInt(raw.Size, 10))
			if _, err := io.Copy(w, raw); err != nil && r.Context().Err() == nil {
				s.logger.ErrorContext(r.Context(), "console: raw message cut short", "message_id", id, "error", err.Error())
			}
			return
		}
	}
	s.fail(w, r, c, err)
}
