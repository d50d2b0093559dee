package console

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain/fault"
)

// The administration pages (menu Administration): customers, domains, users, groups and
// header checks, through the management API's own use cases (app.Management), which
// decide who may see and change what: global administrators everything, a customer's
// administrator their own customer's objects (another customer's is 404). Every write is
// the management API's, with its validation and its ledger events; a form that fails
// changes nothing and comes back with the problems next to its fields.

const adminPath = "/admin"

func (s *Server) adminRoutes(r *mux.Router) {
	r.Handle(adminPath, methods{get: s.withAdmin(s.adminIndex)})
	s.customerRoutes(r)
	s.domainRoutes(r)
	s.userRoutes(r)
	s.groupRoutes(r)
	s.headerCheckRoutes(r)
}

// withAdmin admits, beyond withSession, those app.Management.Admits admits.
func (s *Server) withAdmin(fn pageFunc) http.HandlerFunc {
	return s.withSession(func(w http.ResponseWriter, r *http.Request, c *call) {
		if err := c.app.Management.Admits(app.Caller{Scope: c.scope}); err != nil {
			s.fail(w, r, c, err)
			return
		}
		fn(w, r, c)
	})
}

// caller is the management caller of a console request.
func (c *call) caller(r *http.Request, w http.ResponseWriter) app.Caller {
	return app.Caller{Scope: c.scope, Meta: metadata(r, w, c)}
}

func (s *Server) adminIndex(w http.ResponseWriter, r *http.Request, c *call) {
	s.render(w, r, c, http.StatusOK, "admin", "Administration", struct{ Global bool }{c.scope.IsGlobalAdmin()})
}

// field is one input of an administration form.
type field struct {
	Name, Label string
	// Type is text, password, textarea or select.
	Type     string
	Value    string
	Options  []option
	Help     string
	Required bool
	ReadOnly bool
	Error    string
}

type option struct{ Value, Label string }

// formPage is an administration form: create or edit one object.
type formPage struct {
	Heading, Intro string
	Action, Submit string
	Back           string
	Fields         []field
	Problem        *problem
}

// listPage is an administration list.
type listPage struct {
	Heading, Intro string
	New, NewLabel  string // the create link, none when New is ""
	Columns        []string
	Rows           []listRow
	Empty          string
}

type listRow struct {
	Cells []string
	Links []link
}

type link struct{ Href, Label string }

// deletePage asks to confirm a deletion; only its button (a POST) acts.
type deletePage struct {
	Heading, Message string
	Action, Back     string
}

func (s *Server) renderList(w http.ResponseWriter, r *http.Request, c *call, p listPage) {
	s.render(w, r, c, http.StatusOK, "admin_list", p.Heading, p)
}

func (s *Server) renderForm(w http.ResponseWriter, r *http.Request, c *call, status int, p formPage) {
	s.render(w, r, c, status, "admin_form", p.Heading, p)
}

func (s *Server) confirmDelete(w http.ResponseWriter, r *http.Request, c *call, what, action, back string) {
	p := deletePage{Heading: "Delete " + what, Message: "Delete " + what + "? This is recorded in the ledger and cannot be undone here.",
		Action: action, Back: back}
	s.render(w, r, c, http.StatusOK, "admin_confirm", p.Heading, p)
}

// formFailed shows p again, with err's problems next to its fields, when err is a
// validation error or a conflict (a name taken, a domain in use); any other error is an
// error page. Nothing was changed either way.
func (s *Server) formFailed(w http.ResponseWriter, r *http.Request, c *call, p formPage, err error) {
	fields := invalidFields(err)
	kind := fault.KindOf(err)
	if fields == nil && kind != fault.Conflict {
		s.fail(w, r, c, err)
		return
	}
	p.Problem = &problem{Message: "Nothing was changed: " + err.Error()}
	status := http.StatusConflict
	if fields != nil {
		status = http.StatusBadRequest
		p.Problem.Message = "Nothing was changed; please correct the fields marked below."
		p.Problem.Fields = map[string]string{}
		for k, why := range fields {
			name := k[strings.Index(k, ".")+1:] // "0.username": the first element's field
			p.Problem.Fields[name] = why
			for i := range p.Fields {
				if p.Fields[i].Name == name {
					p.Fields[i].Error = why
				}
			}
		}
	}
	s.renderForm(w, r, c, status, p)
}

// formValues sets each field's Value from the submitted form (never a password's).
func formValues(r *http.Request, fields []field) []field {
	for i := range fields {
		if fields[i].Type != "password" && !fields[i].ReadOnly {
			fields[i].Value = r.PostFormValue(fields[i].Name)
		}
	}
	return fields
}

// textOf is a submitted text field as the management inputs take it: "" clears it.
func textOf(r *http.Request, name string) *string {
	v := r.PostFormValue(name)
	return &v
}

// numberOf is a submitted number field as app.Number reads it from JSON: "" is unset,
// anything but a whole number is reported by the use case's validation.
func numberOf(r *http.Request, name string) app.Number {
	var n app.Number
	_ = json.Unmarshal([]byte(strconv.Quote(r.PostFormValue(name))), &n) // a JSON string never fails to decode
	return n
}

// idOf is the numeric id of the route's variable name, 0 when it is not one (which the
// use cases answer as not found).
func idOf(r *http.Request, name string) int64 {
	n, err := strconv.ParseInt(mux.Vars(r)[name], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// yesNo are the options of a 0/1 field.
var yesNo = []option{{"1", "yes"}, {"0", "no"}}

// yesNoText is a 0/1 value as yesNo names it, else the value as it is.
func yesNoText(v string) string {
	for _, o := range yesNo {
		if o.Value == v {
			return o.Label
		}
	}
	return v
}
