package handlers

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
)

// historyJSON is one step of a request's history as the API shows it.
type historyJSON struct {
	Position   int64            `json:"position"`
	Type       string           `json:"type"`
	Actor      string           `json:"actor"`
	IPAddress  *string          `json:"ip_address"`
	RecordedAt string           `json:"recorded_at"`
	LeafHash   string           `json:"leaf_hash"`
	ChainHash  string           `json:"chain_hash"`
	State      app.RequestState `json:"state"`
}

// requestHistory answers GET /api/v1/admin/gdpr/requests/{request_id}/history: the
// request's events from the ledger, oldest first, each with its hashes and the request's
// state after it, replayed by the domain code.
func (s *Server) requestHistory(w http.ResponseWriter, r *http.Request) {
	er, scope, ok := s.erasure(w, r)
	if !ok {
		return
	}
	entries, err := er.History(r.Context(), scope, mux.Vars(r)["request_id"])
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	out := make([]historyJSON, len(entries))
	for i, e := range entries {
		out[i] = historyJSON{Position: e.Position, Type: e.Type, Actor: e.Actor, IPAddress: e.IPAddress,
			RecordedAt: rfc3339(e.RecordedAt), LeafHash: e.LeafHash, ChainHash: e.ChainHash, State: e.State}
	}
	writeJSON(w, http.StatusOK, map[string][]historyJSON{"history": out})
}
