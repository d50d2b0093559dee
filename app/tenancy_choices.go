package app

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/mailledger/mailledger/identity"
)

// TenantChoice is a tenant a global administrator may act in (the API's `?tenant=`, the
// console's tenant switch), and the customer it belongs to ("" none).
type TenantChoice struct {
	Tenant   string
	Customer string
}

// Multitenancy reports MULTITENANCY: whether there are tenants besides DefaultTenant.
func (t *Tenancy) Multitenancy() bool { return t.multitenancy }

// Tenants lists the tenants there are, DefaultTenant first: every customer's, and the
// tenant of every user domain that no customer has (Resolve puts such users in a tenant
// of their domain). Without MULTITENANCY it is DefaultTenant alone.
func (t *Tenancy) Tenants(ctx context.Context) ([]TenantChoice, error) {
	out := []TenantChoice{{Tenant: DefaultTenant}}
	if !t.multitenancy {
		return out, nil
	}
	customers, err := t.customers(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{DefaultTenant: true}
	for _, c := range customers {
		if !seen[c.ref.Tenant] {
			seen[c.ref.Tenant] = true
			out = append(out, TenantChoice{Tenant: c.ref.Tenant, Customer: c.ref.CustomerID})
		}
	}
	domains, err := queryRows(ctx, t.db, "user domains", func(rows *sql.Rows) (string, error) {
		var d string
		if err := rows.Scan(&d); err != nil {
			return "", fmt.Errorf("scan user domain: %w", err)
		}
		return d, nil
	}, `SELECT DISTINCT domain FROM users WHERE domain <> ? ORDER BY domain`, identity.LocalDomain)
	if err != nil {
		return nil, err
	}
	for _, d := range domains {
		has, err := t.customerOf(ctx, customers, d)
		if err != nil {
			return nil, err
		}
		if has || seen[d] || d == "" {
			continue
		}
		seen[d] = true
		out = append(out, TenantChoice{Tenant: TenantOf(t.multitenancy, d)})
	}
	slices.SortStableFunc(out[1:], func(a, b TenantChoice) int { return strings.Compare(a.Tenant, b.Tenant) })
	return out, nil
}

// customerOf reports whether a customer has domain d, directly or by its mapping.
func (t *Tenancy) customerOf(ctx context.Context, customers []customerRow, d string) (bool, error) {
	mapped, err := t.mappedDomain(ctx, d)
	if err != nil {
		return false, err
	}
	match := func(c customerRow) bool { return c.ref.Domain == d || (mapped != "" && c.ref.Domain == mapped) }
	return findCustomer(customers, match) != nil, nil
}

// HasTenant reports whether tenant is one of Tenants.
func (t *Tenancy) HasTenant(ctx context.Context, tenant string) (bool, error) {
	all, err := t.Tenants(ctx)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(all, func(c TenantChoice) bool { return c.Tenant == tenant }), nil
}
