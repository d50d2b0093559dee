package app

import "github.com/mailledger/mailledger/identity"

// ExportTenant is the tenant whose eDiscovery exports the caller creates and reads
// (docs/api.md, "eDiscovery"): an auditor's own tenant; ErrForbidden for everybody else,
// administrators included (they read every tenant's exports through the admin routes
// only). The web console asks it; the API's auditor routes apply the same rule.
func (s Scope) ExportTenant() (string, error) {
	if s.Role != identity.RoleAuditor {
		return "", ErrForbidden
	}
	return s.Tenant, nil
}
