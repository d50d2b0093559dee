package console

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/identity"
)

// The customers of the administration: the service's administrators add, change and
// delete them; a customer's administrator sees their own and changes its branding only
// (app.Management decides; another customer is 404).

const customersPath = adminPath + "/customers"

func (s *Server) customerRoutes(r *mux.Router) {
	r.Handle(customersPath, methods{get: s.withAdmin(s.listCustomers)})
	r.Handle(customersPath+"/new", methods{get: s.withAdmin(s.newCustomerForm), post: s.withAdmin(s.addCustomer)})
	r.Handle(customersPath+"/{id}/edit", methods{get: s.withAdmin(s.editCustomerForm), post: s.withAdmin(s.updateCustomer)})
	r.Handle(customersPath+"/{id}/delete", methods{get: s.withAdmin(s.confirmDeleteCustomer), post: s.withAdmin(s.deleteCustomer)})
}

func (s *Server) listCustomers(w http.ResponseWriter, r *http.Request, c *call) {
	list, err := c.app.Management.Customers(r.Context(), c.caller(r, w))
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	global := c.app.Management.AdmitsService(c.caller(r, w)) == nil
	p := listPage{Heading: "Customers", Empty: "No customer.",
		Columns: []string{"Customer", "Domain", "Address", "Quota", "Used (bytes)", "Retention (days)", "Enabled", "Status"}}
	if global {
		p.New, p.NewLabel = customersPath+"/new", "Add a customer"
	}
	for _, cu := range list {
		path := customersPath + "/" + cu.ID
		row := listRow{Cells: []string{cu.CustomerID, cu.Domain, deref(cu.CustomerAddress), deref(cu.Quota), deref(cu.Used),
			deref(cu.RetentionDays), yesNoText(cu.Enabled), deref(cu.Status)}, Links: []link{{path + "/edit", "Edit"}}}
		if global {
			row.Links = append(row.Links, link{path + "/delete", "Delete…"})
		}
		p.Rows = append(p.Rows, row)
	}
	s.renderList(w, r, c, p)
}

// brandingFields are the fields a customer's administrator may change.
func brandingFields(cu app.CustomerView) []field {
	return []field{
		{Name: "branding_url", Label: "Branding URL", Type: "text", Value: deref(cu.BrandingURL)},
		{Name: "branding_logo", Label: "Logo URL", Type: "text", Value: deref(cu.BrandingLogo)},
		{Name: "support_link", Label: "Support link", Type: "text", Value: deref(cu.SupportLink)},
		{Name: "background_colour", Label: "Background colour", Type: "text", Value: deref(cu.BackgroundColour), Help: "#rrggbb"},
		{Name: "text_colour", Label: "Text colour", Type: "text", Value: deref(cu.TextColour), Help: "#rrggbb"},
	}
}

// serviceFields are the fields only the service's administrators set.
func serviceFields(cu app.CustomerView) []field {
	enabled, purge := cu.Enabled, cu.EnablePurge
	if enabled == "" { // a new customer: enabled, purge off, as add_customer's defaults
		enabled, purge = "1", "0"
	}
	return []field{
		{Name: "domain", Label: "Domain", Type: "text", Value: cu.Domain, Required: true},
		{Name: "customer_address", Label: "Customer address", Type: "text", Value: deref(cu.CustomerAddress), Help: "An email address; with an administrator password, the administrator's user name."},
		{Name: "gui_url", Label: "Console host or URL", Type: "text", Value: deref(cu.GUIURL)},
		{Name: "worker", Label: "Worker", Type: "text", Value: deref(cu.Worker)},
		{Name: "quota", Label: "Quota (bytes)", Type: "text", Value: deref(cu.Quota)},
		{Name: "retention_days", Label: "Retention (days)", Type: "text", Value: deref(cu.RetentionDays)},
		{Name: "enable_purge", Label: "Purge enabled", Type: "select", Value: purge, Options: yesNo},
		{Name: "enabled", Label: "Enabled", Type: "select", Value: enabled, Options: yesNo},
	}
}

func customerForm(cu app.CustomerView, global bool) formPage {
	if cu.ID == "" {
		fields := append([]field{{Name: "customer_id", Label: "Customer id", Type: "text", Required: true}}, serviceFields(cu)...)
		fields = append(fields, field{Name: "admin_password", Label: "Administrator password (optional)", Type: "password",
			Help: "Creates the customer's administrator, named after the customer address."})
		return formPage{Heading: "Add a customer", Action: customersPath + "/new", Submit: "Add customer", Back: customersPath,
			Fields: append(fields, brandingFields(cu)...)}
	}
	fields := []field{{Name: "customer_id", Label: "Customer id", Type: "text", Value: cu.CustomerID, ReadOnly: true}}
	if global {
		fields = append(fields, serviceFields(cu)...)
	}
	return formPage{Heading: "Edit customer " + cu.CustomerID, Action: customersPath + "/" + cu.ID + "/edit", Submit: "Save", Back: customersPath,
		Fields: append(fields, brandingFields(cu)...)}
}

// customerInput reads the form's fields that fields names.
func customerInput(r *http.Request, fields []field) app.CustomerInput {
	in := app.CustomerInput{CustomerID: r.PostFormValue("customer_id")}
	text := map[string]**string{"domain": &in.Domain, "customer_address": &in.CustomerAddress, "gui_url": &in.GUIURL, "worker": &in.Worker,
		"branding_url": &in.BrandingURL, "branding_logo": &in.BrandingLogo, "support_link": &in.SupportLink,
		"background_colour": &in.BackgroundColour, "text_colour": &in.TextColour}
	num := map[string]*app.Number{"quota": &in.Quota, "retention_days": &in.RetentionDays, "enable_purge": &in.EnablePurge, "enabled": &in.Enabled}
	for _, f := range fields {
		if p, ok := text[f.Name]; ok {
			*p = textOf(r, f.Name)
		}
		if p, ok := num[f.Name]; ok {
			*p = numberOf(r, f.Name)
		}
	}
	return in
}

func (s *Server) newCustomerForm(w http.ResponseWriter, r *http.Request, c *call) {
	if err := c.app.Management.AdmitsService(c.caller(r, w)); err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.renderForm(w, r, c, http.StatusOK, customerForm(app.CustomerView{}, true))
}

func (s *Server) addCustomer(w http.ResponseWriter, r *http.Request, c *call) {
	p := customerForm(app.CustomerView{}, true)
	p.Fields = formValues(r, p.Fields)
	in := customerInput(r, p.Fields)
	var err error
	if plain := r.PostFormValue("admin_password"); plain != "" {
		var hash string
		if hash, err = identity.HashPassword(plain); err != nil {
			v := &domain.ValidationError{}
			v.Add("0.admin_password", "cannot be used: "+err.Error())
			err = v
		}
		in.AdminPassword = &hash
	}
	if err == nil {
		_, err = c.app.Management.AddCustomers(r.Context(), c.caller(r, w), []app.CustomerInput{in})
	}
	if err != nil {
		s.formFailed(w, r, c, p, err)
		return
	}
	http.Redirect(w, r, customersPath, http.StatusSeeOther)
}

func (s *Server) customer(w http.ResponseWriter, r *http.Request, c *call) (*app.CustomerView, error) {
	return c.app.Management.Customer(r.Context(), c.caller(r, w), mux.Vars(r)["id"])
}

func (s *Server) editCustomerForm(w http.ResponseWriter, r *http.Request, c *call) {
	cu, err := s.customer(w, r, c)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.renderForm(w, r, c, http.StatusOK, customerForm(*cu, c.app.Management.AdmitsService(c.caller(r, w)) == nil))
}

func (s *Server) updateCustomer(w http.ResponseWriter, r *http.Request, c *call) {
	cu, err := s.customer(w, r, c)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	p := customerForm(*cu, c.app.Management.AdmitsService(c.caller(r, w)) == nil)
	p.Fields = formValues(r, p.Fields)
	in := customerInput(r, p.Fields)
	in.CustomerID = cu.CustomerID
	if _, err := c.app.Management.UpdateCustomers(r.Context(), c.caller(r, w), []app.CustomerInput{in}); err != nil {
		s.formFailed(w, r, c, p, err)
		return
	}
	http.Redirect(w, r, customersPath, http.StatusSeeOther)
}

func (s *Server) confirmDeleteCustomer(w http.ResponseWriter, r *http.Request, c *call) {
	cu, err := s.customer(w, r, c)
	if err == nil {
		err = c.app.Management.AdmitsService(c.caller(r, w))
	}
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	s.confirmDelete(w, r, c, "the customer "+cu.CustomerID+" (its row only: its users, mail and ledger stay)", customersPath+"/"+cu.ID+"/delete", customersPath)
}

func (s *Server) deleteCustomer(w http.ResponseWriter, r *http.Request, c *call) {
	cu, err := s.customer(w, r, c)
	if err == nil {
		_, err = c.app.Management.DeleteCustomers(r.Context(), c.caller(r, w), []app.CustomerInput{{CustomerID: cu.CustomerID}})
	}
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, customersPath, http.StatusSeeOther)
}
