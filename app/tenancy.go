package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/identity"
)

// CustomerRef names a customer and the tenant its data lives in.
type CustomerRef struct {
	ID         int64
	CustomerID string
	Domain     string
	Tenant     string
}

// Scope is who calls and in which tenant, resolved once per request by
// Tenancy.Resolve: the one place that decides tenants. Every use case takes its tenant
// from a Scope, never from the request.
type Scope struct {
	identity.Principal
	// Tenant is the tenant every query of the caller is limited to: DefaultTenant without
	// MULTITENANCY and for the global administrators; otherwise the customer_id of the
	// caller's customer, or the caller's domain when no customer has it.
	Tenant string
	// Customer is the caller's customer (nil: none, and always nil for global admins).
	Customer *CustomerRef
	// Host is the customer whose gui_url names the request's Host (nil: none).
	Host *CustomerRef
}

// CustomerAdmin reports an administrator of a customer (not of the service).
func (s Scope) CustomerAdmin() bool {
	return s.Role == identity.RoleAdmin && !s.IsGlobalAdmin() && s.Customer != nil
}

// SiteTenant is the tenant of a call made to a customer's own host (groups, header
// checks): for a global administrator the Host's customer (Tenant when the Host names
// none), for a customer administrator their own, and ErrNotFound when the Host names
// another customer.
func (s Scope) SiteTenant() (string, error) {
	if s.IsGlobalAdmin() {
		if s.Host != nil {
			return s.Host.Tenant, nil
		}
		return s.Tenant, nil
	}
	if s.Customer == nil || (s.Host != nil && s.Host.CustomerID != s.Customer.CustomerID) {
		return "", fmt.Errorf("%w: no such customer at this host", ErrNotFound)
	}
	return s.Customer.Tenant, nil
}

// Tenancy resolves callers' tenants (MULTITENANCY).
type Tenancy struct {
	db           *database.DB
	multitenancy bool
}

// NewTenancy returns the tenant resolution over db.
func NewTenancy(db *database.DB, multitenancy bool) (*Tenancy, error) {
	if db == nil {
		return nil, errors.New("app: tenancy needs a database")
	}
	return &Tenancy{db: db, multitenancy: multitenancy}, nil
}

// tenantOf is the tenant of customer customerID.
func (t *Tenancy) tenantOf(customerID string) string {
	if t.multitenancy {
		return customerID
	}
	return DefaultTenant
}

// Resolve returns the scope of principal p calling at host (the request's Host header).
// A user belongs to the customer whose domain is the user's domain, or the domain the
// user's domain is mapped to.
func (t *Tenancy) Resolve(ctx context.Context, p identity.Principal, host string) (Scope, error) {
	s := Scope{Principal: p, Tenant: TenantOf(t.multitenancy, p.Domain)}
	if p.IsGlobalAdmin() {
		s.Tenant = DefaultTenant
	}
	customers, err := t.customers(ctx)
	if err != nil {
		return Scope{}, err
	}
	if !p.IsGlobalAdmin() {
		mapped, err := t.mappedDomain(ctx, p.Domain)
		if err != nil {
			return Scope{}, err
		}
		s.Customer = findCustomer(customers, func(c customerRow) bool { return c.ref.Domain == p.Domain || c.ref.Domain == mapped })
	}
	if s.Customer != nil {
		s.Tenant = s.Customer.Tenant
	}
	h := hostName(host)
	s.Host = findCustomer(customers, func(c customerRow) bool { return h != "" && c.host == h })
	return s, nil
}

type customerRow struct {
	ref  CustomerRef
	host string
}

func findCustomer(rows []customerRow, match func(customerRow) bool) *CustomerRef {
	for i := range rows {
		if match(rows[i]) {
			ref := rows[i].ref
			return &ref
		}
	}
	return nil
}

// customers reads every customer's name, domain and host (a short table).
func (t *Tenancy) customers(ctx context.Context) ([]customerRow, error) {
	return queryRows(ctx, t.db, "customers", func(rows *sql.Rows) (customerRow, error) {
		var c customerRow
		var gui sql.NullString
		if err := rows.Scan(&c.ref.ID, &c.ref.CustomerID, &c.ref.Domain, &gui); err != nil {
			return c, fmt.Errorf("scan customer: %w", err)
		}
		c.ref.Tenant = t.tenantOf(c.ref.CustomerID)
		c.host = hostName(gui.String)
		return c, nil
	}, `SELECT id, customer_id, domain, gui_url FROM customers ORDER BY id`)
}

// mappedDomain is the domain that domain is mapped to ("" none).
func (t *Tenancy) mappedDomain(ctx context.Context, domain string) (string, error) {
	var mapped string
	err := t.db.QueryRowContext(ctx, t.db.Rebind(`SELECT mapped FROM domains WHERE domain = ?`), domain).Scan(&mapped)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read domain: %w", err)
	}
	return mapped, nil
}

// hostName is the lower-cased host, without port, of a Host header or of a gui_url
// given with or without a scheme ("" when there is none).
func hostName(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	h := u.Host
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// ComplianceTenant is the tenant whose legal holds, erasure requests, retention rules and
// ledger events the caller works on (docs/api.md): AllTenants for a global administrator,
// their own tenant for an auditor; ErrForbidden for everybody else. The API and the web
// console both ask it.
func (s Scope) ComplianceTenant() (string, error) {
	switch {
	case s.IsGlobalAdmin():
		return AllTenants, nil
	case s.Role == identity.RoleAuditor:
		return s.Tenant, nil
	}
	return "", ErrForbidden
}

// ReaderIn is the caller reading the archive of tenant: a plain user sees only the mail of
// their own address, auditors and administrators the whole tenant. It returns nil for a
// plain user without an address, who may see nothing.
func (s Scope) ReaderIn(tenant string, md domain.Metadata) *Reader {
	r := &Reader{Tenant: tenant, Meta: md}
	if s.Role == identity.RoleUser {
		if s.Email == "" {
			return nil
		}
		r.Participant = s.Email
	}
	return r
}
