package console

import (
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/archive"
)

// attachment answers one attachment of a message as a download (app.Messages.Attachment,
// recorded as a view): always application/octet-stream with Content-Disposition
// attachment, so that nothing in it (an HTML file, an SVG) is ever shown on the console's
// origin, under the file name the message gave it.
func (s *Server) attachment(w http.ResponseWriter, r *http.Request, c *call) {
	rd, id, err := reader(r, w, c)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	seq, convErr := strconv.Atoi(mux.Vars(r)["seq"])
	if convErr != nil || seq < 1 {
		s.fail(w, r, c, fmt.Errorf("%w: attachment %q of message %d", archive.ErrNotFound, mux.Vars(r)["seq"], id))
		return
	}
	att, err := c.app.Messages.Attachment(r.Context(), *rd, id, seq)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", attachmentDisposition(att.Name, id, seq))
	w.Header().Set("Content-Length", strconv.Itoa(len(att.Content)))
	if _, err := w.Write(att.Content); err != nil && r.Context().Err() == nil {
		s.logger.ErrorContext(r.Context(), "console: attachment cut short", "message_id", id, "seq", seq, "error", err.Error())
	}
}

// attachmentDisposition is `attachment` with the file name (RFC 6266, non-ASCII as
// RFC 5987 filename*), or a made-up name when the message gave none or only path
// separators and control characters.
func attachmentDisposition(name string, id int64, seq int) string {
	clean := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' {
			return -1
		}
		return r
	}, name)
	if strings.Trim(clean, ". ") == "" {
		clean = fmt.Sprintf("message-%d-attachment-%d", id, seq)
	}
	return mime.FormatMediaType("attachment", map[string]string{"filename": clean})
}
