package handlers

import (
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
)

// The legal-hold routes (docs/api.md, "Legal holds"): global administrators manage the holds of
// every tenant, auditors those of their own; everybody else is forbidden. Another
// tenant's hold is not found, never forbidden.

const legalHoldsPath = "/api/v1/admin/legal-holds"

func (s *Server) legalHoldRoutes(api *mux.Router) {
	api.Handle("/admin/legal-holds", withQuery(getOrPOST(s.listHolds, s.placeHold), "status", "tenant"))
	api.Handle("/admin/legal-holds/{id}", withQuery(onlyGET(s.getHold), "tenant"))
	api.Handle("/admin/legal-holds/{id}/release", withQuery(onlyPOST(s.releaseHold), "tenant"))
}

// holdJSON is a legal hold as the API shows it.
type holdJSON struct {
	ID         string  `json:"id"`
	Type       string  `json:"type"`
	Value      string  `json:"value"`
	Reason     string  `json:"reason"`
	Matter     *string `json:"matter"` // null when the hold names no matter
	Status     string  `json:"status"`
	CreatedBy  string  `json:"created_by"`
	CreatedAt  string  `json:"created_at"`
	ReleasedBy *string `json:"released_by"`
	ReleasedAt *string `json:"released_at"`
}

func holdView(h *app.HoldView) holdJSON {
	v := holdJSON{ID: h.ID, Type: h.Type, Value: h.Value, Reason: h.Reason, Status: h.Status,
		CreatedBy: h.CreatedBy, CreatedAt: rfc3339(h.CreatedAt), ReleasedBy: h.ReleasedBy}
	if h.Matter != "" {
		matter := h.Matter
		v.Matter = &matter
	}
	if h.ReleasedAt != nil {
		at := rfc3339(*h.ReleasedAt)
		v.ReleasedAt = &at
	}
	return v
}

// listHolds answers GET /api/v1/admin/legal-holds?status=active|released, newest first.
func (s *Server) listHolds(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.holdScope(w, r)
	if !ok {
		return
	}
	var ve ValidationError
	status := queryString(r.URL.Query(), "status", 32, &ve)
	if err := ve.err(); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	holds, err := s.app.Load().LegalHolds.List(r.Context(), scope, status)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	out := make([]holdJSON, len(holds))
	for i := range holds {
		out[i] = holdView(&holds[i])
	}
	writeJSON(w, http.StatusOK, map[string][]holdJSON{"legal_holds": out})
}

// placeHold answers POST /api/v1/admin/legal-holds: 201 with the hold and its Location.
// A global administrator places it in the tenant of the `tenant` query parameter
// ("default" when absent), an auditor in their own.
func (s *Server) placeHold(w http.ResponseWriter, r *http.Request) {
	createInTenant(s, w, r, legalHoldsPath, func(tenant string, in app.PlaceHoldInput) (string, any, error) {
		hold, err := s.app.Load().LegalHolds.Place(r.Context(), tenant, in, metadata(r))
		if err != nil {
			return "", nil, err
		}
		return hold.ID, holdView(hold), nil
	})
}

// createInTenant answers a POST that creates an object for the roles that manage legal
// holds, in the tenant the caller acts in (their own; a global administrator's
// `?tenant=`, "default" when absent): the body decoded into an In, then 201 with the
// object's view and its Location under base.
func createInTenant[In any](s *Server, w http.ResponseWriter, r *http.Request, base string, create func(tenant string, in In) (id string, view any, err error)) {
	c := caller(r)
	if _, err := holdScope(c); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	tenant, err := s.tenantParam(r, c)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	var in In
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	id, view, err := create(tenant, in)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	w.Header().Set("Location", base+"/"+url.PathEscape(id))
	writeJSON(w, http.StatusCreated, view)
}

// getHold answers GET /api/v1/admin/legal-holds/{id}.
func (s *Server) getHold(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.holdScope(w, r)
	if !ok {
		return
	}
	hold, err := s.app.Load().LegalHolds.Get(r.Context(), scope, mux.Vars(r)["id"])
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, holdView(hold))
}

// releaseHold answers POST /api/v1/admin/legal-holds/{id}/release: 200 with the released
// hold, 409 invalid_transition when it is released already.
func (s *Server) releaseHold(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.holdScope(w, r)
	if !ok {
		return
	}
	hold, err := s.app.Load().LegalHolds.Release(r.Context(), scope, mux.Vars(r)["id"], metadata(r))
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, holdView(hold))
}

// holdScope returns the tenant whose holds the caller reads or releases: every tenant for
// a global administrator (or the one named by the `tenant` query parameter), their own
// for an auditor. It answers 403 for everybody else.
func (s *Server) holdScope(w http.ResponseWriter, r *http.Request) (string, bool) {
	c := caller(r)
	scope, err := holdScope(c)
	if err == nil && r.URL.Query().Has("tenant") {
		scope, err = s.tenantParam(r, c)
	}
	if err != nil {
		writeError(w, r, s.logger, err)
		return "", false
	}
	return scope, true
}
