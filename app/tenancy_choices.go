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
	lone, err := t.loneDomains(ctx, customers)
	if err != nil {
		return nil, err
	}
	for _, d := range lone {
		if tenant := TenantOf(t.multitenancy, d); !seen[tenant] {
			seen[tenant] = true
			out = append(out, TenantChoice{Tenant: tenant})
		}
	}
	slices.SortStableFunc(out[1:], func(a, b TenantChoice) int { return strings.Compare(a.Tenant, b.Tenant) })
	return out, nil
}

// loneDomains are the domains of users (the global administrators' aside) that no
// customer has, directly or by a domain mapping.
func (t *Tenancy) loneDomains(ctx context.Context, customers []customerRow) ([]string, error) {
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
	mapped, err := t.mappings(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range domains {
		m := mapped[d]
		has := findCustomer(customers, func(c customerRow) bool { return c.ref.Domain == d || (m != "" && c.ref.Domain == m) }) != nil
		if !has && d != "" {
			out = append(out, d)
		}
	}
	return out, nil
}

// mappings reads every domain mapping: domain → the domain it is mapped to.
func (t *Tenancy) mappings(ctx context.Context) (map[string]string, error) {
	pairs, err := queryRows(ctx, t.db, "domains", func(rows *sql.Rows) ([2]string, error) {
		var p [2]string
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			return p, fmt.Errorf("scan domain: %w", err)
		}
		return p, nil
	}, `SELECT domain, mapped FROM domains WHERE mapped <> ''`)
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p[0]] = p[1]
	}
	return out, err
}

// HasTenant reports whether tenant is one of Tenants.
func (t *Tenancy) HasTenant(ctx context.Context, tenant string) (bool, error) {
	all, err := t.Tenants(ctx)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(all, func(c TenantChoice) bool { return c.Tenant == tenant }), nil
}
