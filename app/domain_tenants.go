package app

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"time"
)

// DomainTenants tells the SMTP receiver which customer's tenant a recipient domain
// belongs to, under MULTITENANCY=1: the customer whose domain it is, or whose domain it
// is mapped to (the management API's domains). It keeps the customers and the domain
// mappings in memory and reads them again after DefaultHeaderRulesRefresh, so a customer
// added through the API receives mail within that time without a restart (at once in
// this process: Invalidate).
type DomainTenants struct {
	tenancy *Tenancy

	mu       sync.Mutex
	byDomain map[string]string // a customer's domain, and every domain mapped to one → tenant
	loaded   time.Time
}

// NewDomainTenants returns the lookup over the tenancy's database.
func NewDomainTenants(t *Tenancy) *DomainTenants { return &DomainTenants{tenancy: t} }

// Tenant returns the tenant of a recipient domain (lower case, no trailing dot); false
// when no customer has it. A read that fails keeps the last table read (and is tried
// again at the next refresh).
func (d *DomainTenants) Tenant(domain string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byDomain == nil || time.Since(d.loaded) >= DefaultHeaderRulesRefresh {
		ctx, cancel := context.WithTimeout(context.Background(), headerRulesLoadTimeout)
		defer cancel()
		if m, err := d.read(ctx); err == nil || d.byDomain == nil {
			d.byDomain = m
		}
		d.loaded = time.Now()
	}
	tenant, ok := d.byDomain[strings.ToLower(domain)]
	return tenant, ok
}

// Invalidate makes the next lookup read the tables again.
func (d *DomainTenants) Invalidate() {
	d.mu.Lock()
	d.loaded = time.Time{}
	d.mu.Unlock()
}

func (d *DomainTenants) read(ctx context.Context) (map[string]string, error) {
	customers, err := d.tenancy.customers(ctx)
	if err != nil {
		return map[string]string{}, err
	}
	out := map[string]string{}
	for _, c := range customers {
		out[strings.ToLower(c.ref.Domain)] = c.ref.Tenant
	}
	mapped, err := queryRows(ctx, d.tenancy.db, "domains", func(rows *sql.Rows) ([2]string, error) {
		var p [2]string
		return p, rows.Scan(&p[0], &p[1])
	}, `SELECT domain, mapped FROM domains WHERE mapped <> ''`)
	if err != nil {
		return out, err
	}
	for _, p := range mapped {
		if tenant, ok := out[strings.ToLower(p[1])]; ok {
			out[strings.ToLower(p[0])] = tenant
		}
	}
	return out, nil
}
