package handlers

import (
	"net/http"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/eventstore"
)

// eventsJSON is a page of GET /api/v1/ledger/events: the records as stored and hashed
// (eventstore.Record's API form), and the `from` of the next page, null after the last.
type eventsJSON struct {
	Events   []eventstore.Record `json:"events"`
	NextFrom *int64              `json:"next_from"`
}

// ledgerEvents answers GET /api/v1/ledger/events?stream=&type=&from=&limit=: the events
// of the caller's tenant (every tenant's for a global administrator, or `?tenant=`), so
// that an auditor can replay and check a history without database access. Auditors and
// global administrators only: events name addresses, unlike the hashes of the other
// ledger routes.
func (s *Server) ledgerEvents(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.holdScope(w, r)
	if !ok {
		return
	}
	v := r.URL.Query()
	var ve ValidationError
	q := app.EventsQuery{
		StreamID: queryString(v, "stream", 128, &ve),
		Type:     queryString(v, "type", 128, &ve),
		From:     queryIntDefault(v, "from", 1, 1, 1<<62, &ve),
		Limit:    int(queryIntDefault(v, "limit", app.DefaultEventsLimit, 1, app.MaxEventsLimit, &ve)),
	}
	if err := ve.err(); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	recs, next, err := s.app.Load().Ledger.Events(r.Context(), scope, q)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	out := eventsJSON{Events: recs}
	if out.Events == nil {
		out.Events = []eventstore.Record{}
	}
	if next > 0 {
		out.NextFrom = &next
	}
	writeJSON(w, http.StatusOK, out)
}
