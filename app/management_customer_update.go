package app

import (
	"fmt"
	"strings"
)

// checkCustomerUpdates checks who may change what, then each element's values.
func checkCustomerUpdates(c Caller, in []CustomerInput) error {
	if !c.Scope.IsGlobalAdmin() {
		for _, cu := range in {
			if cu.CustomerID != c.Scope.Customer.CustomerID {
				return fmt.Errorf("%w: customer %s", ErrNotFound, cu.CustomerID)
			}
			if cu.CustomerAddress != nil || cu.Worker != nil || cu.Quota.Set || cu.RetentionDays.Set || cu.GUIURL != nil ||
				cu.Domain != nil || cu.EnablePurge.Set || cu.Enabled.Set || cu.AdminPassword != nil {
				return fmt.Errorf("%w: a customer administrator may change only the branding fields", ErrForbidden)
			}
		}
	}
	return validateAll(in, false)
}

// customerSets is the SET clause and arguments of the fields in gives.
func customerSets(in *CustomerInput) (string, []any) {
	var cols []string
	var args []any
	text := func(col string, s *string) {
		if s != nil {
			cols, args = append(cols, col+" = ?"), append(args, strOrNil(s))
		}
	}
	num := func(col string, n Number) {
		if n.Set {
			cols, args = append(cols, col+" = ?"), append(args, n.Value)
		}
	}
	text("customer_address", in.CustomerAddress)
	text("gui_url", in.GUIURL)
	if in.Domain != nil {
		cols, args = append(cols, "domain = ?"), append(args, *in.Domain)
	}
	text("worker", in.Worker)
	num("quota", in.Quota)
	num("retention_days", in.RetentionDays)
	text("branding_url", in.BrandingURL)
	text("branding_logo", in.BrandingLogo)
	text("support_link", in.SupportLink)
	text("background_colour", in.BackgroundColour)
	text("text_colour", in.TextColour)
	num("enable_purge", in.EnablePurge)
	num("enabled", in.Enabled)
	return strings.Join(cols, ", "), args
}
