package console

import (
	"html/template"
	"net/http"

	"github.com/mailledger/mailledger/archive"
)

// messagePage is one message: its metadata and its body, the HTML part sanitised.
type messagePage struct {
	Message *archive.Message
	HTML    template.HTML
	Text    string
	// Attachments are the message's attachments, each a download link.
	Attachments []archive.Attachment
	// RestoreTo fills the restore form: the user's own address, when known.
	RestoreTo string
}

// message shows one message through app.Messages.Get and Body (each recorded as a view):
// the headers, then the HTML part sanitised (sanitizeHTML: no script, no handlers, no
// remote content), else the text.
func (s *Server) message(w http.ResponseWriter, r *http.Request, c *call) {
	rd, id, err := reader(r, w, c)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	m, err := c.app.Messages.Get(r.Context(), *rd, id)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	body, err := c.app.Messages.Body(r.Context(), *rd, id)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	page := messagePage{Message: m, Text: body.Text, Attachments: body.Attachments, RestoreTo: c.sess.principal.Email}
	if body.HTML != "" {
		page.HTML = sanitizeHTML(body.HTML)
	}
	title := m.Subject
	if title == "" {
		title = "(no subject)"
	}
	s.render(w, r, c, http.StatusOK, "message", title, page)
}
