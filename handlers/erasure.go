package handlers

import (
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
)

// The erasure routes (docs/api.md, "Erasure requests"): global administrators
// work on the requests of every tenant, auditors on those of their own; everybody else is
// forbidden. Another tenant's request is not found, never forbidden. Every action records
// the caller, the client IP, the user agent and the correlation id in its ledger event.

const gdprRequestsPath = "/api/v1/admin/gdpr/requests"

func (s *Server) erasureRoutes(api *mux.Router) {
	const one = "/admin/gdpr/requests/{request_id}"
	api.Handle("/admin/gdpr/requests", withQuery(getOrPOST(s.listRequests, s.createRequest), "status", "sort", "overdue", "limit", "offset", "tenant"))
	api.Handle(one, withQuery(onlyGET(s.getRequest), "tenant"))
	api.Handle(one+"/assess", withQuery(onlyPOST(s.requestAction(http.StatusAccepted, assessRequest)), "tenant"))
	api.Handle(one+"/approve", withQuery(onlyPOST(s.requestAction(http.StatusOK, approveRequest)), "tenant"))
	api.Handle(one+"/reject", withQuery(onlyPOST(s.requestAction(http.StatusOK, rejectRequest)), "tenant"))
	api.Handle(one+"/execute", withQuery(onlyPOST(s.requestAction(http.StatusAccepted, executeRequest)), "tenant"))
	api.Handle(one+"/audit", withQuery(onlyGET(s.requestAudit), "tenant"))
	api.Handle(one+"/history", withQuery(onlyGET(s.requestHistory), "tenant"))
	api.Handle(one+"/extend", withQuery(onlyPOST(s.extendDeadline), "tenant"))
	s.certificateRoutes(api, one)
}

// requestJSON is an erasure request as the API shows it: the columns of gdpr_requests,
// unset values null, times RFC 3339 in UTC, plus certificate_available.
type requestJSON struct {
	ID                   int64    `json:"id"`
	RequestID            string   `json:"request_id"`
	EmailAddresses       []string `json:"email_addresses"`
	RequesterName        *string  `json:"requester_name"`
	Status               string   `json:"status"`
	EmailsAsSender       int      `json:"emails_as_sender"`
	EmailsAsRecipient    int      `json:"emails_as_recipient"`
	AttachmentsCount     int      `json:"attachments_count"`
	BlockedByLegalHold   bool     `json:"blocked_by_legal_hold"`
	LegalHoldIDs         []string `json:"legal_hold_ids"`
	BlockedReason        *string  `json:"blocked_reason"`
	CreatedBy            string   `json:"created_by"`
	CreatedAt            string   `json:"created_at"`
	ApprovedBy           *string  `json:"approved_by"`
	ApprovedAt           *string  `json:"approved_at"`
	RejectionReason      *string  `json:"rejection_reason"`
	ExecutedAt           *string  `json:"executed_at"`
	DeletedCount         int      `json:"deleted_count"`
	RedactedCount        int      `json:"redacted_count"`
	CertificateHash      *string  `json:"certificate_hash"`
	CertificateAvailable bool     `json:"certificate_available"`
	DueAt                string   `json:"due_at"`
	Overdue              bool     `json:"overdue"`
}

func requestView(v *app.RequestView) requestJSON {
	return requestJSON{ID: v.ID, RequestID: v.RequestID, EmailAddresses: nonNil(v.EmailAddresses),
		RequesterName: v.RequesterName, Status: v.Status, EmailsAsSender: v.EmailsAsSender,
		EmailsAsRecipient: v.EmailsAsRecipient, AttachmentsCount: v.AttachmentsCount,
		BlockedByLegalHold: v.BlockedByLegalHold, LegalHoldIDs: nonNil(v.LegalHoldIDs),
		BlockedReason: v.BlockedReason, CreatedBy: v.CreatedBy, CreatedAt: rfc3339(v.CreatedAt),
		ApprovedBy: v.ApprovedBy, ApprovedAt: rfc3339Ptr(v.ApprovedAt), RejectionReason: v.RejectionReason,
		ExecutedAt: rfc3339Ptr(v.ExecutedAt), DeletedCount: v.DeletedCount, RedactedCount: v.RedactedCount,
		CertificateHash: v.CertificateHash, CertificateAvailable: v.CertificateAvailable,
		DueAt: rfc3339(v.DueAt), Overdue: v.Overdue}
}

// requestListJSON is the answer of GET /requests.
type requestListJSON struct {
	Requests []requestJSON `json:"requests"`
	Total    int           `json:"total"`
	Limit    int           `json:"limit"`
	Offset   int           `json:"offset"`
}

// listRequests answers GET /requests?status=&limit=&offset=, newest first.
func (s *Server) listRequests(w http.ResponseWriter, r *http.Request) {
	er, scope, ok := s.erasure(w, r)
	if !ok {
		return
	}
	in, err := parseRequestQuery(r.URL.Query())
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	list, err := er.List(r.Context(), scope, in)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	out := requestListJSON{Requests: make([]requestJSON, len(list.Requests)), Total: list.Total,
		Limit: list.Limit, Offset: list.Offset}
	for i := range list.Requests {
		out.Requests[i] = requestView(&list.Requests[i])
	}
	writeJSON(w, http.StatusOK, out)
}

// parseRequestQuery reads the filter and the page of GET /requests; the status value is
// checked by app.Erasure.List.
func parseRequestQuery(v url.Values) (app.ListRequestsInput, error) {
	var ve ValidationError
	in := app.ListRequestsInput{Status: queryString(v, "status", 32, &ve), Sort: queryString(v, "sort", 16, &ve),
		Overdue: queryBool(v, "overdue", &ve)}
	in.Limit = int(queryIntDefault(v, "limit", app.DefaultRequestLimit, 1, app.MaxRequestLimit, &ve))
	in.Offset = int(queryIntDefault(v, "offset", 0, 0, 1<<31-1, &ve))
	return in, ve.err()
}

// createRequest answers POST /requests: 201 with the request and its Location. A global
// administrator creates it in the tenant of the `tenant` query parameter ("default" when
// absent), an auditor in their own. The assessment starts on its own.
func (s *Server) createRequest(w http.ResponseWriter, r *http.Request) {
	er, _, ok := s.erasure(w, r)
	if !ok {
		return
	}
	tenant, err := s.tenantParam(r, caller(r))
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	var in app.CreateRequestInput
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	v, err := er.Create(r.Context(), tenant, in, metadata(r))
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	w.Header().Set("Location", gdprRequestsPath+"/"+url.PathEscape(v.RequestID))
	writeJSON(w, http.StatusCreated, requestView(v))
}

// getRequest answers GET /requests/{request_id}.
func (s *Server) getRequest(w http.ResponseWriter, r *http.Request) {
	er, scope, ok := s.erasure(w, r)
	if !ok {
		return
	}
	v, err := er.Get(r.Context(), scope, mux.Vars(r)["request_id"])
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, requestView(v))
}

// actionFunc performs one action on the request id of tenant scope.
type actionFunc func(r *http.Request, er *app.Erasure, scope, id string) (*app.RequestView, error)

func assessRequest(r *http.Request, er *app.Erasure, scope, id string) (*app.RequestView, error) {
	return er.Assess(r.Context(), scope, id, metadata(r))
}

func approveRequest(r *http.Request, er *app.Erasure, scope, id string) (*app.RequestView, error) {
	return er.Approve(r.Context(), scope, id, metadata(r))
}

// rejectBody is the body of POST …/reject.
type rejectBody struct {
	Reason string `json:"reason"`
}

func rejectRequest(r *http.Request, er *app.Erasure, scope, id string) (*app.RequestView, error) {
	var in rejectBody
	if err := decodeJSON(r, &in); err != nil {
		return nil, err
	}
	return er.Reject(r.Context(), scope, id, in.Reason, metadata(r))
}

func executeRequest(r *http.Request, er *app.Erasure, scope, id string) (*app.RequestView, error) {
	return er.Execute(r.Context(), scope, id, metadata(r))
}

// requestAction answers an action route with status and the request after the action.
// A state that does not allow the action is 409 invalid_transition, and changes nothing.
func (s *Server) requestAction(status int, fn actionFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		er, scope, ok := s.erasure(w, r)
		if !ok {
			return
		}
		v, err := fn(r, er, scope, mux.Vars(r)["request_id"])
		if err != nil {
			writeError(w, r, s.logger, err)
			return
		}
		writeJSON(w, status, requestView(v))
	}
}

// auditJSON is one audit record of a request.
type auditJSON struct {
	ID          int64   `json:"id"`
	RequestID   string  `json:"request_id"`
	Action      string  `json:"action"`
	PerformedBy string  `json:"performed_by"`
	PerformedAt string  `json:"performed_at"`
	Details     any     `json:"details"`
	IPAddress   *string `json:"ip_address"`
}

// requestAudit answers GET /requests/{request_id}/audit, oldest first.
func (s *Server) requestAudit(w http.ResponseWriter, r *http.Request) {
	er, scope, ok := s.erasure(w, r)
	if !ok {
		return
	}
	records, err := er.Audit(r.Context(), scope, mux.Vars(r)["request_id"])
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	out := make([]auditJSON, len(records))
	for i, a := range records {
		out[i] = auditJSON{ID: a.ID, RequestID: a.RequestID, Action: a.Action, PerformedBy: a.PerformedBy,
			PerformedAt: rfc3339(a.PerformedAt), Details: a.Details, IPAddress: a.IPAddress}
	}
	writeJSON(w, http.StatusOK, map[string][]auditJSON{"audit": out})
}

// erasure returns the erasure use cases and the tenant scope of the caller (every tenant
// for a global administrator, or the one of `?tenant=`; their own for an auditor; 403 for
// everybody else, as for legal holds). Without the archive it answers 503.
func (s *Server) erasure(w http.ResponseWriter, r *http.Request) (*app.Erasure, string, bool) {
	scope, ok := s.holdScope(w, r)
	if !ok {
		return nil, "", false
	}
	er := s.app.Load().Erasure
	if er == nil {
		writeError(w, r, s.logger, ErrArchiveUnavailable)
		return nil, "", false
	}
	return er, scope, true
}

// rfc3339Ptr formats an optional time, nil when unset.
func rfc3339Ptr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := rfc3339(*t)
	return &s
}
