package smtpd

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// tenantPattern is what a tenant id may look like (it names a folder of the message
// store), as for `mailledger import --tenant`.
var tenantPattern = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$`)

// Tenants maps a recipient's domain to the tenant its mail is archived for.
// With no mapping, every recipient is of Default ("default"). With a mapping, a recipient
// of a domain it does not name is of Default, or refused when Default is empty.
type Tenants struct {
	byDomain map[string]string
	// Default is the tenant of recipients of no mapped domain; empty refuses them.
	Default string
	// lookup, when set (WithLookup), names the tenant of a domain the mapping does not.
	lookup func(domain string) (string, bool)
	// defaulted: Default is the built-in "default", not SMTP_DEFAULT_TENANT.
	defaulted bool
}

// WithLookup returns t that also asks lookup for a domain its mapping does not name (the
// customers of the management API under MULTITENANCY=1). A domain no one names is then
// refused, unless SMTP_DEFAULT_TENANT names a tenant for it.
func (t Tenants) WithLookup(lookup func(domain string) (string, bool)) Tenants {
	t.lookup = lookup
	if t.defaulted {
		t.Default, t.defaulted = "", false
	}
	return t
}

// ParseTenants reads SMTP_TENANT_DOMAINS, comma-separated domain=tenant pairs
// ("example.com=acme, example.org=beta"), and SMTP_DEFAULT_TENANT. Domains are matched
// whole and without regard to case: a subdomain needs a pair of its own.
func ParseTenants(pairs, defaultTenant string) (Tenants, error) {
	t := Tenants{Default: defaultTenant}
	var problems []string
	if defaultTenant != "" && !validTenant(defaultTenant) {
		problems = append(problems, fmt.Sprintf("SMTP_DEFAULT_TENANT %q is not a tenant id", defaultTenant))
	}
	for _, pair := range strings.Split(pairs, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		domain, tenant, ok := strings.Cut(pair, "=")
		domain, tenant = normalizeDomain(domain), strings.TrimSpace(tenant)
		switch {
		case !ok || domain == "" || strings.ContainsAny(domain, "@ "):
			problems = append(problems, fmt.Sprintf("SMTP_TENANT_DOMAINS: %q is not domain=tenant", pair))
		case !validTenant(tenant):
			problems = append(problems, fmt.Sprintf("SMTP_TENANT_DOMAINS: %q is not a tenant id (1 to 64 letters, digits, '.', '_' or '-')", tenant))
		case t.byDomain[domain] != "" && t.byDomain[domain] != tenant:
			problems = append(problems, fmt.Sprintf("SMTP_TENANT_DOMAINS: %s is given two tenants", domain))
		default:
			if t.byDomain == nil {
				t.byDomain = map[string]string{}
			}
			t.byDomain[domain] = tenant
		}
	}
	if len(problems) > 0 {
		return t, fmt.Errorf("%w: %s", ErrConfig, strings.Join(problems, "; "))
	}
	return t, nil
}

func validTenant(t string) bool { return tenantPattern.MatchString(t) && !strings.Contains(t, "..") }

// Mapped reports whether a domain mapping is configured.
func (t Tenants) Mapped() bool { return len(t.byDomain) > 0 }

// For returns the tenant of the recipient address rcpt; false when it has none.
func (t Tenants) For(rcpt string) (string, bool) {
	domain := domainOf(rcpt)
	if tenant, ok := t.byDomain[domain]; ok {
		return tenant, true
	}
	if t.lookup != nil && domain != "" {
		if tenant, ok := t.lookup(domain); ok {
			return tenant, true
		}
	}
	return t.Default, t.Default != ""
}

// String lists the mapping for the start-up log.
func (t Tenants) String() string {
	pairs := make([]string, 0, len(t.byDomain))
	for d, tenant := range t.byDomain {
		pairs = append(pairs, d+"="+tenant)
	}
	sort.Strings(pairs)
	customers := ""
	if t.lookup != nil {
		customers = ", then the customers' domains"
	}
	return fmt.Sprintf("domains [%s]%s, default %q", strings.Join(pairs, ","), customers, t.Default)
}

// split groups rcpts by tenant, in the order each tenant first appears; every recipient
// must have a tenant (Rcpt refused the others).
func (t Tenants) split(rcpts []string) (tenants []string, byTenant map[string][]string) {
	byTenant = map[string][]string{}
	for _, r := range rcpts {
		tenant, ok := t.For(r)
		if !ok {
			continue
		}
		if _, seen := byTenant[tenant]; !seen {
			tenants = append(tenants, tenant)
		}
		byTenant[tenant] = append(byTenant[tenant], r)
	}
	return tenants, byTenant
}

func domainOf(addr string) string {
	at := strings.LastIndexByte(addr, '@')
	if at < 0 {
		return ""
	}
	return normalizeDomain(addr[at+1:])
}

func normalizeDomain(d string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
}
