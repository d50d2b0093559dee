package console

import (
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
)

// The legal-hold pages (menu Compliance), with the roles and tenants of the API:
// global administrators every tenant's holds, auditors their own tenant's.

const holdsPath = "/compliance/holds"

func (s *Server) holdRoutes(r *mux.Router) {
	r.Handle(holdsPath, methods{get: s.withCompliance(s.listHolds)})
	r.Handle(holdsPath+"/new", methods{get: s.withCompliance(s.newHoldForm), post: s.withCompliance(s.placeHold)})
	r.Handle(holdsPath+"/{id}/release", methods{get: s.withCompliance(s.confirmRelease), post: s.withCompliance(s.releaseHold)})
}

// holdListPage is the list of holds and its filter.
type holdListPage struct {
	Holds  []app.HoldView
	Status string
}

// listHolds lists the holds, newest first, filtered by ?status=active|released.
func (s *Server) listHolds(w http.ResponseWriter, r *http.Request, c *call, tenant string) {
	status := r.URL.Query().Get("status")
	holds, err := c.app.LegalHolds.List(r.Context(), tenant, status)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.render(w, r, c, http.StatusOK, "holds", "Legal holds", holdListPage{Holds: holds, Status: status})
}

// newHoldPage is the place form, filled again after a refusal.
type newHoldPage struct {
	Input   app.PlaceHoldInput
	Problem *problem
}

func (s *Server) newHoldForm(w http.ResponseWriter, r *http.Request, c *call, _ string) {
	s.render(w, r, c, http.StatusOK, "hold_new", "Place a legal hold", newHoldPage{Input: app.PlaceHoldInput{Type: "address"}})
}

// placeHold places a hold in the caller's tenant (a global administrator's: the tenant
// switch, else "default") (app.LegalHolds.Place validates it).
func (s *Server) placeHold(w http.ResponseWriter, r *http.Request, c *call, _ string) {
	in := app.PlaceHoldInput{Type: r.PostFormValue("type"), Value: r.PostFormValue("value"),
		Reason: r.PostFormValue("reason"), Matter: r.PostFormValue("matter")}
	if _, err := c.app.LegalHolds.Place(r.Context(), c.homeTenant(), in, metadata(r, w, c)); err != nil {
		if fields := invalidFields(err); fields != nil {
			page := newHoldPage{Input: in, Problem: &problem{Message: "The hold was not placed.", Fields: fields}}
			s.render(w, r, c, http.StatusBadRequest, "hold_new", "Place a legal hold", page)
			return
		}
		s.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, holdsPath, http.StatusSeeOther)
}

// confirmRelease asks to confirm the release of a hold.
func (s *Server) confirmRelease(w http.ResponseWriter, r *http.Request, c *call, tenant string) {
	hold, err := c.app.LegalHolds.Get(r.Context(), tenant, mux.Vars(r)["id"])
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.render(w, r, c, http.StatusOK, "hold_release", "Release "+hold.ID, struct {
		Hold *app.HoldView
		Path string
	}{hold, holdsPath + "/" + url.PathEscape(hold.ID) + "/release"})
}

// releaseHold releases a hold (another tenant's is not found).
func (s *Server) releaseHold(w http.ResponseWriter, r *http.Request, c *call, tenant string) {
	if _, err := c.app.LegalHolds.Release(r.Context(), tenant, mux.Vars(r)["id"], metadata(r, w, c)); err != nil {
		s.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, holdsPath, http.StatusSeeOther)
}
