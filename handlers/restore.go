package handlers

import (
	"errors"
	"net/http"

	"github.com/mailledger/mailledger/app"
)

// restoreInput is the body of POST /api/v1/messages/{id}/restore.
type restoreInput struct {
	// To is the mailbox the message goes to; a plain user may leave it out (their own
	// address) and may name no other.
	To string `json:"to"`
}

// restoreJSON is the answer of a restore the smarthost took.
type restoreJSON struct {
	MessageID int64  `json:"message_id"`
	To        string `json:"to"`
	Delivered bool   `json:"delivered"`
}

// restoreMessage answers POST /api/v1/messages/{id}/restore: the original bytes go to
// the mailbox through the smarthost, and the attempt is a ledger event whatever its
// outcome (app.Messages.Restore).
func (s *Server) restoreMessage(w http.ResponseWriter, r *http.Request) {
	reader, msgs, id, ok := s.messageRequest(w, r)
	if !ok {
		return
	}
	var in restoreInput
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	if len(in.To) > 320 { // RFC 5321's limits: 64 + 1 + 255
		writeError(w, r, s.logger, &ValidationError{Fields: map[string]string{"to": "longer than 320 characters"}})
		return
	}
	to, err := msgs.Restore(r.Context(), *reader, id, in.To)
	if errors.Is(err, app.ErrBadRecipient) {
		err = &ValidationError{Fields: map[string]string{"to": "not an email address"}}
	}
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, restoreJSON{MessageID: id, To: to, Delivered: true})
}
