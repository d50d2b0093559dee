package console

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain/erasure"
)

// The GDPR pages (menu Compliance): global administrators see every tenant's requests,
// auditors their own tenant's (app.Scope.ComplianceTenant); another tenant's request is
// not found. Every change is a POST with the session's CSRF token, after a confirm page.

const gdprPath = "/compliance/gdpr"

// requestStatuses are the states the list filters by: the domain's own list.
var requestStatuses = erasure.Statuses

func (s *Server) erasureRoutes(r *mux.Router) {
	const one = gdprPath + "/{request_id}"
	r.Handle(gdprPath, methods{get: s.withCompliance(s.listRequests)})
	r.Handle(gdprPath+"/new", methods{get: s.withCompliance(s.newRequestForm), post: s.withCompliance(s.createRequest)})
	r.Handle(one, methods{get: s.withCompliance(s.showRequest)})
	r.Handle(one+"/{action:approve|reject|execute}", methods{get: s.withCompliance(s.confirmAction), post: s.withCompliance(s.requestAction)})
	r.Handle(one+"/extend", methods{post: s.withCompliance(s.extendDeadline)})
	s.certificateRoutes(r, one)
}

// requestListPage is one page of requests and the filter.
type requestListPage struct {
	Requests   []app.RequestView
	Statuses   []string
	Status     string
	Sort       string
	Overdue    bool // only the open requests past their due date
	AllTenants bool // every tenant's requests: the list names each one's tenant
	Total      int
	Prev, Next string
}

// listRequests lists the requests, filtered by ?status= and (?overdue=1) to the open ones
// past their due date, newest first or, with ?sort=due, the earliest due date first
// (app.Erasure.List checks them).
func (s *Server) listRequests(w http.ResponseWriter, r *http.Request, c *call, tenant string) {
	in := app.ListRequestsInput{Status: r.URL.Query().Get("status"), Sort: r.URL.Query().Get("sort"),
		Overdue: r.URL.Query().Get("overdue") == "1", Limit: pageSize}
	in.Offset, _ = strconv.Atoi(r.URL.Query().Get("offset"))
	in.Offset = max(in.Offset, 0)
	list, err := c.app.Erasure.List(r.Context(), tenant, in)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	page := requestListPage{Requests: list.Requests, Statuses: requestStatuses, Status: in.Status, Sort: in.Sort, Total: list.Total,
		Overdue: in.Overdue, AllTenants: tenant == app.AllTenants}
	filters := url.Values{"status": {in.Status}, "sort": {in.Sort}}
	if in.Overdue {
		filters.Set("overdue", "1")
	}
	page.Prev, page.Next = pageLinks(filters, in.Offset, len(list.Requests), list.Total)
	s.render(w, r, c, http.StatusOK, "requests", "GDPR requests", page)
}

// newRequestForm shows the form of a new request.
func (s *Server) newRequestForm(w http.ResponseWriter, r *http.Request, c *call, _ string) {
	s.render(w, r, c, http.StatusOK, "request_new", "New GDPR request", newRequestPage{})
}

// newRequestPage is the create form, filled again after a refusal.
type newRequestPage struct {
	Addresses, Name string
	Problem         *problem
}

// createRequest records a new request through app.Erasure.Create, which validates the
// addresses, and shows it. It goes to the caller's tenant; a global administrator's is
// the one of the tenant switch, else "default".
func (s *Server) createRequest(w http.ResponseWriter, r *http.Request, c *call, _ string) {
	page := newRequestPage{Addresses: r.PostFormValue("email_addresses"), Name: r.PostFormValue("requester_name")}
	in := app.CreateRequestInput{EmailAddresses: strings.Fields(strings.ReplaceAll(page.Addresses, ",", " ")),
		RequesterName: strings.TrimSpace(page.Name)}
	v, err := c.app.Erasure.Create(r.Context(), c.homeTenant(), in, metadata(r, w, c))
	if err != nil {
		if fields := invalidFields(err); fields != nil {
			page.Problem = &problem{Message: "The request was not created.", Fields: fields}
			s.render(w, r, c, http.StatusBadRequest, "request_new", "New GDPR request", page)
			return
		}
		s.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, gdprPath+"/"+url.PathEscape(v.RequestID), http.StatusSeeOther)
}

// requestPage is one request with its history replayed from the ledger, and the
// deadline form (filled again after a refusal).
type requestPage struct {
	Request *app.RequestView
	History []app.HistoryEntry
	Path    string
	Extend  extendForm
}

// showRequest shows a request, the actions its state allows, and its history as
// app.Erasure.History replays it from the ledger (each event, who, when, from where,
// the state after it, its leaf hash).
func (s *Server) showRequest(w http.ResponseWriter, r *http.Request, c *call, tenant string) {
	s.renderRequest(w, r, c, tenant, http.StatusOK, extendForm{})
}

// renderRequest renders the request page of {request_id} with status and the deadline
// form ext.
func (s *Server) renderRequest(w http.ResponseWriter, r *http.Request, c *call, tenant string, status int, ext extendForm) {
	id := mux.Vars(r)["request_id"]
	v, err := c.app.Erasure.Get(r.Context(), tenant, id)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	history, err := c.app.Erasure.History(r.Context(), tenant, id)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	page := requestPage{Request: v, History: history, Path: gdprPath + "/" + url.PathEscape(id), Extend: newExtendForm(v, ext)}
	s.render(w, r, c, status, "request", v.RequestID, page)
}

// confirmPage asks to confirm an action on a request.
type confirmPage struct {
	Request *app.RequestView
	Action  string
	Path    string
}

// confirmAction shows the confirm step of approve, reject (with its reason) or execute.
func (s *Server) confirmAction(w http.ResponseWriter, r *http.Request, c *call, tenant string) {
	id := mux.Vars(r)["request_id"]
	v, err := c.app.Erasure.Get(r.Context(), tenant, id)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	page := confirmPage{Request: v, Action: mux.Vars(r)["action"], Path: gdprPath + "/" + url.PathEscape(id)}
	s.render(w, r, c, http.StatusOK, "request_confirm", "Confirm: "+page.Action+" "+v.RequestID, page)
}

// requestAction performs the confirmed action through the use case, which checks the
// state and the segregation of duties, and goes back to the request.
func (s *Server) requestAction(w http.ResponseWriter, r *http.Request, c *call, tenant string) {
	id, md := mux.Vars(r)["request_id"], metadata(r, w, c)
	var err error
	switch mux.Vars(r)["action"] {
	case "approve":
		_, err = c.app.Erasure.Approve(r.Context(), tenant, id, md)
	case "reject":
		_, err = c.app.Erasure.Reject(r.Context(), tenant, id, r.PostFormValue("reason"), md)
	case "execute":
		_, err = c.app.Erasure.Execute(r.Context(), tenant, id, md)
	}
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, gdprPath+"/"+url.PathEscape(id), http.StatusSeeOther)
}

// invalidFields returns the field problems of a validation error, nil for other errors.
func invalidFields(err error) map[string]string {
	var fe interface{ InvalidFields() map[string]string }
	if !errors.As(err, &fe) {
		return nil
	}
	return fe.InvalidFields()
}
