package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/identity"
)

// The users of the administration: a customer administrator's are those of their
// customer's domains (app.Management.Users decides). The password is typed in plain and
// hashed here with bcrypt (identity.HashPassword), as `mailledger user add` does; the
// management use case takes the hash and never shows it again.

const usersPath = adminPath + "/users"

func (s *Server) userRoutes(r *mux.Router) {
	r.Handle(usersPath, methods{get: s.withAdmin(s.listUsers)})
	r.Handle(usersPath+"/new", methods{get: s.withAdmin(s.newUserForm), post: s.withAdmin(s.addUser)})
	r.Handle(usersPath+"/{uid}/edit", methods{get: s.withAdmin(s.editUserForm), post: s.withAdmin(s.updateUser)})
	r.Handle(usersPath+"/{uid}/delete", methods{get: s.withAdmin(s.confirmDeleteUser), post: s.withAdmin(s.deleteUser)})
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request, c *call) {
	users, err := c.app.Management.Users(r.Context(), c.caller(r, w))
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	p := listPage{Heading: "Users", New: usersPath + "/new", NewLabel: "Add a user", Empty: "No user.",
		Columns: []string{"User name", "Name", "Email", "Domain", "Role", "Group", "State"}}
	for _, u := range users {
		state := "enabled"
		if u.Disabled {
			state = "disabled"
		}
		path := usersPath + "/" + strconv.FormatInt(u.UID, 10)
		p.Rows = append(p.Rows, listRow{Cells: []string{u.Username, u.Realname, u.Email, u.Domain, u.Role.String(), u.Group, state},
			Links: []link{{path + "/edit", "Edit"}, {path + "/delete", "Delete…"}}})
	}
	s.renderList(w, r, c, p)
}

// roleOptions are the roles by their isadmin number.
var roleOptions = []option{{"0", "user"}, {"1", "admin"}, {"2", "auditor"}}

// userFields is the user form; edit adds the group and makes the password optional.
func userFields(u app.UserView, domains []string, edit bool) []field {
	pw := field{Name: "password", Label: "Password", Type: "password", Required: !edit}
	if edit {
		pw.Label, pw.Help = "New password", "Leave empty to keep the current password."
	}
	f := []field{
		{Name: "username", Label: "User name", Type: "text", Value: u.Username, Required: true},
		{Name: "realname", Label: "Name", Type: "text", Value: u.Realname},
		{Name: "email", Label: "Email address", Type: "text", Value: u.Email, Help: "The mail of this address is the user's own."},
		{Name: "domain", Label: "Domain", Type: "text", Value: u.Domain, Required: true, Help: domainHelp(domains)},
		pw,
		{Name: "isadmin", Label: "Role", Type: "select", Value: strconv.Itoa(int(u.Role)), Options: roleOptions},
	}
	if edit {
		f = append(f, field{Name: "group", Label: "Group", Type: "text", Value: u.Group, Help: "The name of a group; empty for none."})
	}
	return append(f, field{Name: "dn", Label: "LDAP DN", Type: "text", Value: u.DN},
		field{Name: "samaccountname", Label: "sAMAccountName", Type: "text", Value: u.SAMAccountName})
}

// domainNames are the domains get_domains lists to c, and "local" (the service's own
// administrators) for those who may manage the service: the form's hint; the use case
// decides which domain c may put a user in.
func (s *Server) domainNames(r *http.Request, w http.ResponseWriter, c *call) ([]string, error) {
	list, err := c.app.Management.Domains(r.Context(), c.caller(r, w))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range list {
		out = append(out, d.Domain)
	}
	if c.app.Management.AdmitsService(c.caller(r, w)) == nil {
		out = append(out, identity.LocalDomain)
	}
	return out, nil
}

func domainHelp(domains []string) string {
	if len(domains) == 0 {
		return "Your customer's domain, or a domain mapped to it."
	}
	return "One of: " + strings.Join(domains, ", ") + "."
}

func (s *Server) userForm(r *http.Request, w http.ResponseWriter, c *call, u app.UserView, edit bool) (formPage, error) {
	domains, err := s.domainNames(r, w, c)
	if err != nil {
		return formPage{}, err
	}
	p := formPage{Heading: "Add a user", Action: usersPath + "/new", Submit: "Add user", Back: usersPath,
		Fields: userFields(u, domains, edit)}
	if edit {
		p.Heading, p.Submit = "Edit user "+u.Username, "Save"
		p.Action = fmt.Sprintf("%s/%d/edit", usersPath, u.UID)
	}
	return p, nil
}

func (s *Server) newUserForm(w http.ResponseWriter, r *http.Request, c *call) {
	p, err := s.userForm(r, w, c, app.UserView{}, false)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.renderForm(w, r, c, http.StatusOK, p)
}

// userInput reads the form; the password is hashed, and a bad or missing one is a
// field problem like the use case's.
func userInput(r *http.Request, edit bool) (app.UserInput, error) {
	in := app.UserInput{Username: textOf(r, "username"), Realname: textOf(r, "realname"), Email: textOf(r, "email"),
		Domain: textOf(r, "domain"), IsAdmin: numberOf(r, "isadmin"), DN: textOf(r, "dn"), SAMAccountName: textOf(r, "samaccountname")}
	if edit {
		in.Group = textOf(r, "group")
	}
	plain := r.PostFormValue("password")
	if plain == "" && edit {
		return in, nil
	}
	v := &domain.ValidationError{}
	if plain == "" {
		v.Add("0.password", "is required")
		return in, v
	}
	hash, err := identity.HashPassword(plain)
	if err != nil {
		v.Add("0.password", "cannot be used: "+err.Error())
		return in, v
	}
	in.Password = &hash
	return in, nil
}

func (s *Server) addUser(w http.ResponseWriter, r *http.Request, c *call) {
	p, err := s.userForm(r, w, c, app.UserView{}, false)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	p.Fields = formValues(r, p.Fields)
	in, err := userInput(r, false)
	if err == nil {
		_, err = c.app.Management.AddUsers(r.Context(), c.caller(r, w), []app.UserInput{in})
	}
	if err != nil {
		s.formFailed(w, r, c, p, err)
		return
	}
	http.Redirect(w, r, usersPath, http.StatusSeeOther)
}

func (s *Server) editUserForm(w http.ResponseWriter, r *http.Request, c *call) {
	u, err := c.app.Management.User(r.Context(), c.caller(r, w), idOf(r, "uid"))
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	p, err := s.userForm(r, w, c, *u, true)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.renderForm(w, r, c, http.StatusOK, p)
}

func (s *Server) updateUser(w http.ResponseWriter, r *http.Request, c *call) {
	u, err := c.app.Management.User(r.Context(), c.caller(r, w), idOf(r, "uid"))
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	p, err := s.userForm(r, w, c, *u, true)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	p.Fields = formValues(r, p.Fields)
	in, err := userInput(r, true)
	if err == nil {
		in.UID = app.Number{Set: true, Value: u.UID}
		_, err = c.app.Management.UpdateUsers(r.Context(), c.caller(r, w), []app.UserInput{in})
	}
	if err != nil {
		s.formFailed(w, r, c, p, err)
		return
	}
	http.Redirect(w, r, usersPath, http.StatusSeeOther)
}

func (s *Server) confirmDeleteUser(w http.ResponseWriter, r *http.Request, c *call) {
	u, err := c.app.Management.User(r.Context(), c.caller(r, w), idOf(r, "uid"))
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.confirmDelete(w, r, c, "the user "+u.Username, fmt.Sprintf("%s/%d/delete", usersPath, u.UID), usersPath)
}

func (s *Server) deleteUser(w http.ResponseWriter, r *http.Request, c *call) {
	in := app.UserInput{UID: app.Number{Set: true, Value: idOf(r, "uid")}}
	if _, err := c.app.Management.DeleteUsers(r.Context(), c.caller(r, w), []app.UserInput{in}); err != nil {
		s.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, usersPath, http.StatusSeeOther)
}
