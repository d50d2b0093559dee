package app

import (
	"context"
	"fmt"
	"regexp"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/management"
	"github.com/mailledger/mailledger/identity"
)

// CustomerInput is an element of add_customer, update_customer and delete_customer. An
// absent or null field is left as it is on update; "" clears a text field.
type CustomerInput struct {
	CustomerID       string  `json:"customer_id"`
	CustomerAddress  *string `json:"customer_address"`
	Worker           *string `json:"worker"`
	Quota            Number  `json:"quota"`
	RetentionDays    Number  `json:"retention_days"`
	GUIURL           *string `json:"gui_url"`
	Domain           *string `json:"domain"`
	AdminPassword    *string `json:"admin_password"`
	BrandingURL      *string `json:"branding_url"`
	BrandingLogo     *string `json:"branding_logo"`
	SupportLink      *string `json:"support_link"`
	BackgroundColour *string `json:"background_colour"`
	TextColour       *string `json:"text_colour"`
	EnablePurge      Number  `json:"enable_purge"`
	Enabled          Number  `json:"enabled"`
}

// customerIDRE is the shape of a customer_id, which is a tenant id under MULTITENANCY.
var customerIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// validate checks element i; add requires what a new customer needs.
func (in *CustomerInput) validate(v *domain.ValidationError, i int, add bool) {
	if !customerIDRE.MatchString(in.CustomerID) {
		v.Add(fieldOf(i, "customer_id"), "must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if in.Domain != nil || add {
		d, ok := domainName(deref(in.Domain))
		if !ok {
			v.Add(fieldOf(i, "domain"), "must be a domain name")
		}
		in.Domain = &d
	}
	if in.CustomerAddress != nil && *in.CustomerAddress != "" {
		a, ok := address(*in.CustomerAddress)
		if !ok {
			v.Add(fieldOf(i, "customer_address"), "must be an email address")
		}
		in.CustomerAddress = &a
	}
	if add && in.AdminPassword != nil && *in.AdminPassword != "" && deref(in.CustomerAddress) == "" {
		v.Add(fieldOf(i, "customer_address"), "is required with admin_password: it is the administrator's user name")
	}
	optText(v, i, "admin_password", in.AdminPassword, identity.ValidHash, "must be a bcrypt or argon2id password hash")
	in.checkRest(v, i)
}

func (in *CustomerInput) checkRest(v *domain.ValidationError, i int) {
	web := func(s string) bool { return webURL(s, false) }
	optText(v, i, "gui_url", in.GUIURL, func(s string) bool { return webURL(s, true) }, "must be a host or an http(s) URL")
	optText(v, i, "branding_url", in.BrandingURL, web, "must be an http(s) URL")
	optText(v, i, "branding_logo", in.BrandingLogo, web, "must be an http(s) URL")
	optText(v, i, "support_link", in.SupportLink, web, "must be an http(s) URL")
	optText(v, i, "background_colour", in.BackgroundColour, colourRE.MatchString, "must be #rrggbb")
	optText(v, i, "text_colour", in.TextColour, colourRE.MatchString, "must be #rrggbb")
	optText(v, i, "worker", in.Worker, func(s string) bool { _, ok := domainName(s); return ok || len(s) <= 255 }, "must be a host name")
	in.Quota.check(v, i, "quota", 0, 1<<53)
	in.RetentionDays.check(v, i, "retention_days", 1, 100*366)
	in.EnablePurge.check(v, i, "enable_purge", 0, 1)
	in.Enabled.check(v, i, "enabled", 0, 1)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// AddCustomers adds the customers of in (global administrators only) and, for each
// given admin_password, the customer's administrator: user name the customer_address,
// isadmin 1, the customer's domain.
func (m *Management) AddCustomers(ctx context.Context, c Caller, in []CustomerInput) (int, error) {
	if err := requireGlobal(c); err != nil {
		return 0, err
	}
	if err := validateAll(in, true); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for i := range in {
			if err := m.addCustomer(ctx, ch, &in[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

func (m *Management) addCustomer(ctx context.Context, ch *changes, in *CustomerInput) error {
	enabled := int64(1)
	if in.Enabled.Set {
		enabled = in.Enabled.Value
	}
	_, err := ch.tx.Exec(ctx, `INSERT INTO customers (customer_id, customer_address, gui_url, domain, worker, quota, retention_days, branding_url, branding_logo, support_link, background_colour, text_colour, enable_purge, enabled, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		in.CustomerID, strOrNil(in.CustomerAddress), strOrNil(in.GUIURL), *in.Domain, strOrNil(in.Worker), numOrNil(in.Quota), numOrNil(in.RetentionDays),
		strOrNil(in.BrandingURL), strOrNil(in.BrandingLogo), strOrNil(in.SupportLink), strOrNil(in.BackgroundColour), strOrNil(in.TextColour),
		in.EnablePurge.Value, enabled, m.cfg.Now().Unix())
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("%w: customer %s or its domain %s", ErrExists, in.CustomerID, *in.Domain)
	}
	if err != nil {
		return fmt.Errorf("add customer: %w", err)
	}
	after, err := customerTx(ctx, ch.tx.Tx, in.CustomerID)
	if err != nil {
		return err
	}
	tenant := m.tenancy.tenantOf(in.CustomerID)
	if err := ch.record(ctx, tenant, management.NewChange(management.CustomerAdded, "customer", in.CustomerID, nil, after.fields(), false)); err != nil {
		return err
	}
	if deref(in.AdminPassword) == "" {
		return nil
	}
	admin := identity.User{Username: *in.CustomerAddress, Realname: in.CustomerID + " administrator", Email: *in.CustomerAddress,
		Domain: *in.Domain, PasswordHash: *in.AdminPassword, Role: identity.RoleAdmin}
	return addUserTx(ctx, ch, tenant, admin)
}

func numOrNil(n Number) any {
	if !n.Set {
		return nil
	}
	return n.Value
}

// DeleteCustomers deletes the customers of in (global administrators only): their rows
// only, as the spec says. Their users, messages, index, files and ledger stay
// (docs/operations.md says how to remove them).
func (m *Management) DeleteCustomers(ctx context.Context, c Caller, in []CustomerInput) (int, error) {
	if err := requireGlobal(c); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for _, cu := range in {
			before, err := customerTx(ctx, ch.tx.Tx, cu.CustomerID)
			if err != nil {
				return err
			}
			if _, err := ch.tx.Exec(ctx, `DELETE FROM customers WHERE customer_id = ?`, cu.CustomerID); err != nil {
				return fmt.Errorf("delete customer: %w", err)
			}
			ev := management.NewChange(management.CustomerDeleted, "customer", cu.CustomerID, before.fields(), nil, false)
			if err := ch.record(ctx, m.tenancy.tenantOf(cu.CustomerID), ev); err != nil {
				return err
			}
		}
		return nil
	})
}
