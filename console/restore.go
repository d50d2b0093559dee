package console

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/domain/fault"
)

// Restore to a mailbox: the message page's form names the mailbox, a confirm page asks,
// and its button (a POST) sends the original bytes through the smarthost with
// app.Messages.Restore, the API's use case: the same roles (auditors and administrators
// any message of the tenant to any address, a user their own mail to their own address),
// the same ledger event (archive.message_restored), the same errors.

// maxRestoreTo bounds the address, as the API does (RFC 5321: 64 + 1 + 255).
const maxRestoreTo = 320

func (s *Server) restoreRoutes(r *mux.Router) {
	r.Handle("/archive/messages/{id}/restore", methods{get: s.withSession(s.confirmRestore), post: s.withSession(s.restore)})
}

// restorePage is the confirm page and, after the POST, its outcome.
type restorePage struct {
	Message   *archive.Message
	To        string
	Smarthost string
	Sent      bool
	Problem   *problem
}

// confirmRestore shows the message (read through app.Messages.Get, a recorded view) and
// the mailbox, and asks to confirm.
func (s *Server) confirmRestore(w http.ResponseWriter, r *http.Request, c *call) {
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
	page := restorePage{Message: m, To: strings.TrimSpace(r.URL.Query().Get("to")), Smarthost: c.app.Messages.Smarthost()}
	if page.To == "" {
		page.To = c.sess.principal.Email
	}
	if page.Smarthost == "" {
		page.Problem = noSmarthost() // said at once; the POST would be refused (503)
	}
	s.render(w, r, c, http.StatusOK, "restore", "Restore to a mailbox", page)
}

// restore sends the message to the mailbox of the form field to and shows the outcome:
// to whom and through which smarthost, or why not.
func (s *Server) restore(w http.ResponseWriter, r *http.Request, c *call) {
	rd, id, err := reader(r, w, c)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	page := restorePage{Message: &archive.Message{ID: id}, To: strings.TrimSpace(r.PostFormValue("to")), Smarthost: c.app.Messages.Smarthost()}
	if len(page.To) > maxRestoreTo {
		err = fmt.Errorf("%w: longer than %d characters", app.ErrBadRecipient, maxRestoreTo)
	} else {
		page.To, err = c.app.Messages.Restore(r.Context(), *rd, id, page.To)
	}
	if err == nil {
		page.Sent = true
		s.render(w, r, c, http.StatusOK, "restore", "Message restored", page)
		return
	}
	if page.To == "" {
		page.To = strings.TrimSpace(r.PostFormValue("to"))
	}
	status, shown := restoreProblem(err)
	if shown == nil {
		s.fail(w, r, c, err)
		return
	}
	page.Problem = shown
	s.render(w, r, c, status, "restore", "Restore to a mailbox", page)
}

// restoreProblem is what the restore page says of err, and its status; nil for the
// errors the error page shows (not found, the server's own).
func restoreProblem(err error) (int, *problem) {
	switch {
	case errors.Is(err, app.ErrNoSmarthost):
		return http.StatusServiceUnavailable, noSmarthost()
	case errors.Is(err, app.ErrBadRecipient):
		return http.StatusBadRequest, &problem{Message: "Nothing was sent.", Fields: map[string]string{"to": "not an email address"}}
	case errors.Is(err, app.ErrRestoreTarget):
		return http.StatusForbidden, &problem{Message: "Nothing was sent: you may restore mail only to your own address."}
	case errors.Is(err, app.ErrSmarthostRefused):
		return http.StatusServiceUnavailable, &problem{Message: "The smarthost did not take the message; the attempt is in the ledger. " + err.Error()}
	case fault.KindOf(err) == fault.Unavailable:
		return http.StatusServiceUnavailable, &problem{Message: err.Error()}
	}
	return 0, nil
}

func noSmarthost() *problem {
	return &problem{Message: "No smarthost is configured (SMARTHOST_ADDR), so mailledger cannot send mail: nothing was sent. The operator sets SMARTHOST_ADDR to enable restores."}
}
