package console

import (
	"errors"
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
	// Verified: the stored file was read, decrypted and its SHA-256 equals the digest
	// recorded at archiving (every read checks it). Broken says why it is not, when the
	// file is missing, changed or unreadable: the page then shows the metadata only.
	Verified bool
	Broken   string
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
	if errors.Is(err, archive.ErrIntegrity) {
		s.logger.ErrorContext(r.Context(), "console: message failed its integrity check", "message_id", id, "error", err.Error())
		page := messagePage{Message: m, Broken: err.Error()}
		s.render(w, r, c, http.StatusOK, "message", subjectTitle(m), page)
		return
	}
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	page := messagePage{Message: m, Text: body.Text, Attachments: body.Attachments, RestoreTo: c.sess.principal.Email, Verified: true}
	if body.HTML != "" {
		page.HTML = sanitizeHTML(body.HTML)
	}
	s.render(w, r, c, http.StatusOK, "message", subjectTitle(m), page)
}

// subjectTitle is the page title of a message: its subject, else "(no subject)".
func subjectTitle(m *archive.Message) string {
	if m.Subject == "" {
		return "(no subject)"
	}
	return m.Subject
}
