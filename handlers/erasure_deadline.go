package handlers

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"
)

// extendInput is the body of POST …/requests/{request_id}/extend.
type extendInput struct {
	// DueAt is the new due date: an RFC 3339 time, or YYYY-MM-DD for the end of that day
	// (UTC).
	DueAt  string `json:"due_at"`
	Reason string `json:"reason"`
}

// extendDeadline answers POST /api/v1/admin/gdpr/requests/{request_id}/extend: 200 with
// the request and its new due date (at most 90 days after its creation); the extension
// is an event of the request.
func (s *Server) extendDeadline(w http.ResponseWriter, r *http.Request) {
	er, scope, ok := s.erasure(w, r)
	if !ok {
		return
	}
	var in extendInput
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	until, err := parseDueAt(in.DueAt)
	if err != nil {
		writeError(w, r, s.logger, &ValidationError{Fields: map[string]string{"due_at": "must be an RFC 3339 time or a YYYY-MM-DD date"}})
		return
	}
	v, err := er.ExtendDeadline(r.Context(), scope, mux.Vars(r)["request_id"], until, in.Reason, metadata(r))
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, requestView(v))
}

// parseDueAt reads an RFC 3339 time, or a date meaning the last microsecond of that day.
func parseDueAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, err
	}
	return d.Add(24*time.Hour - time.Microsecond), nil
}
