package console

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
)

// The domains of the administration: a customer administrator sees their customer's
// (get_domains); only the service's administrators add and delete them. The management
// API has no update of a domain: to change one, delete it and add it again.

const domainsPath = adminPath + "/domains"

func (s *Server) domainRoutes(r *mux.Router) {
	r.Handle(domainsPath, methods{get: s.withAdmin(s.listDomains)})
	r.Handle(domainsPath+"/new", methods{get: s.withAdmin(s.newDomainForm), post: s.withAdmin(s.addDomain)})
	r.Handle(domainsPath+"/{domain}/delete", methods{get: s.withAdmin(s.confirmDeleteDomain), post: s.withAdmin(s.deleteDomain)})
}

func (s *Server) listDomains(w http.ResponseWriter, r *http.Request, c *call) {
	domains, err := c.app.Management.Domains(r.Context(), c.caller(r, w))
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	global := c.app.Management.AdmitsService(c.caller(r, w)) == nil
	p := listPage{Heading: "Domains", Empty: "No domain.", Columns: []string{"Domain", "Mapped to", "LDAP"},
		Intro: "Mail of a domain mapped to another belongs to the other's customer. A domain is deleted only once no user or customer has it; to change one, delete it and add it again."}
	if global {
		p.New, p.NewLabel = domainsPath+"/new", "Add a domain"
	}
	for _, d := range domains {
		row := listRow{Cells: []string{d.Domain, d.Mapped, deref(d.Ldap)}}
		if global {
			row.Links = []link{{domainsPath + "/" + url.PathEscape(d.Domain) + "/delete", "Delete…"}}
		}
		p.Rows = append(p.Rows, row)
	}
	s.renderList(w, r, c, p)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func domainForm() formPage {
	return formPage{Heading: "Add a domain", Action: domainsPath + "/new", Submit: "Add domain", Back: domainsPath,
		Fields: []field{
			{Name: "domain", Label: "Domain", Type: "text", Required: true},
			{Name: "mapped", Label: "Mapped to (optional)", Type: "text", Help: "Another domain, whose customer this domain's mail belongs to."},
			{Name: "ldap_id", Label: "LDAP configuration (optional)", Type: "text"},
		}}
}

func (s *Server) newDomainForm(w http.ResponseWriter, r *http.Request, c *call) {
	if err := c.app.Management.AdmitsService(c.caller(r, w)); err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.renderForm(w, r, c, http.StatusOK, domainForm())
}

func (s *Server) addDomain(w http.ResponseWriter, r *http.Request, c *call) {
	p := domainForm()
	p.Fields = formValues(r, p.Fields)
	in := app.DomainInput{Domain: r.PostFormValue("domain"), Mapped: r.PostFormValue("mapped"), LdapID: r.PostFormValue("ldap_id")}
	if _, err := c.app.Management.AddDomains(r.Context(), c.caller(r, w), []app.DomainInput{in}); err != nil {
		s.formFailed(w, r, c, p, err)
		return
	}
	http.Redirect(w, r, domainsPath, http.StatusSeeOther)
}

// domainOf returns the route's domain if get_domains lists it to c (another customer's
// is not found), and then checks that c may delete domains.
func (s *Server) domainOf(w http.ResponseWriter, r *http.Request, c *call) (string, error) {
	name := mux.Vars(r)["domain"]
	domains, err := c.app.Management.Domains(r.Context(), c.caller(r, w))
	if err != nil {
		return "", err
	}
	for _, d := range domains {
		if d.Domain == name {
			return name, c.app.Management.AdmitsService(c.caller(r, w))
		}
	}
	return "", fmt.Errorf("%w: domain %s", app.ErrNotFound, name)
}

func (s *Server) confirmDeleteDomain(w http.ResponseWriter, r *http.Request, c *call) {
	name, err := s.domainOf(w, r, c)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.confirmDelete(w, r, c, "the domain "+name, domainsPath+"/"+url.PathEscape(name)+"/delete", domainsPath)
}

func (s *Server) deleteDomain(w http.ResponseWriter, r *http.Request, c *call) {
	name, err := s.domainOf(w, r, c)
	if err == nil {
		_, err = c.app.Management.DeleteDomains(r.Context(), c.caller(r, w), []app.DomainInput{{Domain: name}})
	}
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, domainsPath, http.StatusSeeOther)
}
