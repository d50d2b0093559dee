package console

import (
	"context"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/fault"
)

// The tenant switch of the global administrator (under MULTITENANCY): the console's
// counterpart of the API's `?tenant=`. The chosen tenant is kept in the session; the
// archive, the GDPR requests and the legal holds then read and act in it.

const tenantPath = "/tenant"

// errNoSwitch refuses the switch to everybody but the global administrator.
var errNoSwitch = fault.New(fault.Forbidden, "only the global administrator switches tenants")

func (s *Server) tenantRoutes(r *mux.Router) {
	r.Handle(tenantPath, methods{post: s.withSession(s.switchTenant)})
}

// tenantSwitch is what the header's selector shows: the tenants and the one chosen.
type tenantSwitch struct {
	Tenants []app.TenantChoice
	Current string
	Next    string
}

// switchFor is the selector of c's caller, nil for everybody but the global
// administrator under MULTITENANCY.
func switchFor(r *http.Request, c *call) (*tenantSwitch, error) {
	if c == nil || c.app == nil || !c.scope.IsGlobalAdmin() || !c.app.Tenancy.Multitenancy() {
		return nil, nil
	}
	tenants, err := c.app.Tenancy.Tenants(r.Context())
	if err != nil {
		return nil, err
	}
	return &tenantSwitch{Tenants: tenants, Current: c.switched, Next: r.URL.RequestURI()}, nil
}

// switchTenant keeps the chosen tenant (form field tenant; empty: none, every tenant's
// requests and holds and the archive of "default") in the session, and goes back to the
// list of the page it came from. Anybody but the global administrator gets 403, and
// nothing is changed.
func (s *Server) switchTenant(w http.ResponseWriter, r *http.Request, c *call) {
	if !c.scope.IsGlobalAdmin() {
		s.fail(w, r, c, errNoSwitch)
		return
	}
	tenant := strings.TrimSpace(r.PostFormValue("tenant"))
	if tenant != "" {
		if err := s.checkTenant(r.Context(), c, tenant); err != nil {
			s.fail(w, r, c, err)
			return
		}
	}
	s.sessions.switchTenant(c.sess.id, tenant)
	s.logger.InfoContext(r.Context(), "console: tenant switched", "user", c.sess.principal.Username, "tenant", tenant)
	http.Redirect(w, r, sectionOf(localPath(r.PostFormValue("next"))), http.StatusSeeOther)
}

// checkTenant refuses a tenant that is not one of app.Tenancy.Tenants, and any switch
// without MULTITENANCY (the only tenant is then "default").
func (s *Server) checkTenant(ctx context.Context, c *call, tenant string) error {
	var ve domain.ValidationError
	if !c.app.Tenancy.Multitenancy() {
		ve.Add("tenant", `multi-tenancy is off: the only tenant is "default"`)
		return ve.Err()
	}
	ok, err := c.app.Tenancy.HasTenant(ctx, tenant)
	if err != nil {
		return err
	}
	if !ok {
		ve.Add("tenant", "no such tenant")
	}
	return ve.Err()
}

// sectionOf is the list page of the section path is in ("/" when none), so that the
// switch never leads to another tenant's object, which would be not found.
func sectionOf(path string) string {
	for _, root := range []string{gdprPath, holdsPath, "/archive"} {
		if path == root || strings.HasPrefix(path, root+"/") || strings.HasPrefix(path, root+"?") {
			return root
		}
	}
	return "/"
}
