package console

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
)

// The groups of the administration: those of the caller's site (app.Scope.SiteTenant: a
// customer administrator's own customer; for a global administrator the customer whose
// host the console is reached at, else the tenant "default").

const groupsPath = adminPath + "/groups"

func (s *Server) groupRoutes(r *mux.Router) {
	r.Handle(groupsPath, methods{get: s.withAdmin(s.listGroups)})
	r.Handle(groupsPath+"/new", methods{get: s.withAdmin(s.newGroupForm), post: s.withAdmin(s.addGroup)})
	r.Handle(groupsPath+"/{id}/edit", methods{get: s.withAdmin(s.editGroupForm), post: s.withAdmin(s.updateGroup)})
	r.Handle(groupsPath+"/{id}/delete", methods{get: s.withAdmin(s.confirmDeleteGroup), post: s.withAdmin(s.deleteGroup)})
}

func (s *Server) listGroups(w http.ResponseWriter, r *http.Request, c *call) {
	groups, err := c.app.Management.Groups(r.Context(), c.caller(r, w))
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	p := listPage{Heading: "Groups", New: groupsPath + "/new", NewLabel: "Add a group", Empty: "No group.",
		Intro:   "A group gathers addresses: its members see the mail of the assigned addresses.",
		Columns: []string{"Name", "Addresses", "Assigned addresses"}}
	for _, g := range groups {
		path := groupsPath + "/" + g.ID
		p.Rows = append(p.Rows, listRow{Cells: []string{g.Groupname, g.Email, g.AssignedEmail},
			Links: []link{{path + "/edit", "Edit"}, {path + "/delete", "Delete…"}}})
	}
	s.renderList(w, r, c, p)
}

func groupForm(g app.GroupView) formPage {
	p := formPage{Heading: "Add a group", Action: groupsPath + "/new", Submit: "Add group", Back: groupsPath,
		Fields: []field{
			{Name: "groupname", Label: "Name", Type: "text", Value: g.Groupname, Required: true},
			{Name: "email", Label: "Addresses", Type: "textarea", Value: g.Email, Help: "One email address a line."},
			{Name: "assigned_email", Label: "Assigned addresses", Type: "textarea", Value: g.AssignedEmail, Help: "One email address a line."},
		}}
	if g.ID != "" {
		p.Heading, p.Submit, p.Action = "Edit group "+g.Groupname, "Save", groupsPath+"/"+g.ID+"/edit"
	}
	return p
}

func groupInput(r *http.Request) app.GroupInput {
	return app.GroupInput{Groupname: textOf(r, "groupname"), Email: textOf(r, "email"), AssignedEmail: textOf(r, "assigned_email")}
}

func (s *Server) newGroupForm(w http.ResponseWriter, r *http.Request, c *call) {
	s.renderForm(w, r, c, http.StatusOK, groupForm(app.GroupView{}))
}

func (s *Server) addGroup(w http.ResponseWriter, r *http.Request, c *call) {
	p := groupForm(app.GroupView{})
	p.Fields = formValues(r, p.Fields)
	if _, err := c.app.Management.AddGroups(r.Context(), c.caller(r, w), []app.GroupInput{groupInput(r)}); err != nil {
		s.formFailed(w, r, c, p, err)
		return
	}
	http.Redirect(w, r, groupsPath, http.StatusSeeOther)
}

// group reads the route's group in the caller's site; another's is not found.
func (s *Server) group(w http.ResponseWriter, r *http.Request, c *call) (*app.GroupView, error) {
	id := app.Number{Set: true, Value: idOf(r, "id")}
	list, err := c.app.Management.Group(r.Context(), c.caller(r, w), []app.GroupInput{{ID: id}})
	if err != nil {
		return nil, err
	}
	return &list[0], nil
}

func (s *Server) editGroupForm(w http.ResponseWriter, r *http.Request, c *call) {
	g, err := s.group(w, r, c)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.renderForm(w, r, c, http.StatusOK, groupForm(*g))
}

func (s *Server) updateGroup(w http.ResponseWriter, r *http.Request, c *call) {
	g, err := s.group(w, r, c)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	p := groupForm(*g)
	p.Fields = formValues(r, p.Fields)
	in := groupInput(r)
	in.ID = app.Number{Set: true, Value: idOf(r, "id")}
	if _, err := c.app.Management.UpdateGroups(r.Context(), c.caller(r, w), []app.GroupInput{in}); err != nil {
		s.formFailed(w, r, c, p, err)
		return
	}
	http.Redirect(w, r, groupsPath, http.StatusSeeOther)
}

func (s *Server) confirmDeleteGroup(w http.ResponseWriter, r *http.Request, c *call) {
	g, err := s.group(w, r, c)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.confirmDelete(w, r, c, "the group "+g.Groupname, groupsPath+"/"+g.ID+"/delete", groupsPath)
}

func (s *Server) deleteGroup(w http.ResponseWriter, r *http.Request, c *call) {
	in := app.GroupInput{ID: app.Number{Set: true, Value: idOf(r, "id")}}
	if _, err := c.app.Management.DeleteGroups(r.Context(), c.caller(r, w), []app.GroupInput{in}); err != nil {
		s.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, groupsPath, http.StatusSeeOther)
}

// The header checks of the administration: rules of the caller's site (as groups) that
// tag incoming mail whose headers match a pattern. The management API has no update of a
// header check: to change one, add the new rule and delete the old.

const headerChecksPath = adminPath + "/header-checks"

func (s *Server) headerCheckRoutes(r *mux.Router) {
	r.Handle(headerChecksPath, methods{get: s.withAdmin(s.listHeaderChecks)})
	r.Handle(headerChecksPath+"/new", methods{get: s.withAdmin(s.newHeaderCheckForm), post: s.withAdmin(s.addHeaderCheck)})
	r.Handle(headerChecksPath+"/{id}/delete", methods{get: s.withAdmin(s.confirmDeleteHeaderCheck), post: s.withAdmin(s.deleteHeaderCheck)})
}

func (s *Server) listHeaderChecks(w http.ResponseWriter, r *http.Request, c *call) {
	checks, err := c.app.Management.HeaderChecks(r.Context(), c.caller(r, w))
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	p := listPage{Heading: "Header checks", New: headerChecksPath + "/new", NewLabel: "Add a header check", Empty: "No header check.",
		Intro:   "Incoming mail whose headers match a pattern (an RE2 regular expression) gets the tag, oldest rule first. To change a rule, add the new one and delete the old.",
		Columns: []string{"Id", "Pattern", "Tag"}}
	for _, h := range checks {
		p.Rows = append(p.Rows, listRow{Cells: []string{h.ID, h.Pattern, h.Tag},
			Links: []link{{headerChecksPath + "/" + h.ID + "/delete", "Delete…"}}})
	}
	s.renderList(w, r, c, p)
}

func headerCheckForm() formPage {
	return formPage{Heading: "Add a header check", Action: headerChecksPath + "/new", Submit: "Add header check", Back: headerChecksPath,
		Fields: []field{
			{Name: "pattern", Label: "Pattern", Type: "text", Required: true, Help: "An RE2 regular expression, matched against the headers."},
			{Name: "tag", Label: "Tag", Type: "text", Required: true},
		}}
}

func (s *Server) newHeaderCheckForm(w http.ResponseWriter, r *http.Request, c *call) {
	s.renderForm(w, r, c, http.StatusOK, headerCheckForm())
}

func (s *Server) addHeaderCheck(w http.ResponseWriter, r *http.Request, c *call) {
	p := headerCheckForm()
	p.Fields = formValues(r, p.Fields)
	in := app.HeaderCheckInput{Pattern: r.PostFormValue("pattern"), Tag: r.PostFormValue("tag")}
	if _, err := c.app.Management.AddHeaderChecks(r.Context(), c.caller(r, w), []app.HeaderCheckInput{in}); err != nil {
		s.formFailed(w, r, c, p, err)
		return
	}
	http.Redirect(w, r, headerChecksPath, http.StatusSeeOther)
}

func (s *Server) confirmDeleteHeaderCheck(w http.ResponseWriter, r *http.Request, c *call) {
	checks, err := c.app.Management.HeaderChecks(r.Context(), c.caller(r, w))
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	id := strconv.FormatInt(idOf(r, "id"), 10)
	for _, h := range checks {
		if h.ID == id {
			s.confirmDelete(w, r, c, fmt.Sprintf("the header check %s (%s → %s)", h.ID, h.Pattern, h.Tag), headerChecksPath+"/"+h.ID+"/delete", headerChecksPath)
			return
		}
	}
	s.fail(w, r, c, fmt.Errorf("%w: header check %s", app.ErrNotFound, id))
}

func (s *Server) deleteHeaderCheck(w http.ResponseWriter, r *http.Request, c *call) {
	in := app.HeaderCheckInput{ID: app.Number{Set: true, Value: idOf(r, "id")}}
	if _, err := c.app.Management.DeleteHeaderChecks(r.Context(), c.caller(r, w), []app.HeaderCheckInput{in}); err != nil {
		s.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, headerChecksPath, http.StatusSeeOther)
}
