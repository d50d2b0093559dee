package console_test

import (
	"context"
	"strconv"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/identity"
)

// adminObjects are the management objects of the customers example.test and other.test:
// each customer (its numeric id), its domain, a user, and a group and a header check of
// its site; made through app.Management by the global administrator.
type adminObjects struct {
	customer, otherCustomer string
	user, otherUser         int64
	group, otherGroup       string
	check, otherCheck       string
}

// The console hosts of the two customers (their gui_url): a global administrator who
// reaches the console at one works on that customer's groups and header checks.
const (
	exampleHost = "console.example.test"
	otherHost   = "console.other.test"
)

// makeAdminObjects adds the customers example.test and other.test (so that custadmin is
// example.test's administrator), their domains, and a group and a header check in each.
func (f *fixture) makeAdminObjects() adminObjects {
	f.t.Helper()
	ctx := context.Background()
	m := f.app.Management
	admin := f.caller(adminUser, "")
	_, err := m.AddDomains(ctx, admin, []app.DomainInput{{Domain: tenant}, {Domain: otherTenant}})
	require.NoError(f.t, err)
	_, err = m.AddCustomers(ctx, admin, []app.CustomerInput{
		{CustomerID: tenant, Domain: ptr(tenant), GUIURL: ptr(exampleHost)},
		{CustomerID: otherTenant, Domain: ptr(otherTenant), GUIURL: ptr(otherHost)},
	})
	require.NoError(f.t, err)
	var o adminObjects
	customers, err := m.Customers(ctx, admin)
	require.NoError(f.t, err)
	for _, cu := range customers {
		if cu.CustomerID == tenant {
			o.customer = cu.ID
		} else {
			o.otherCustomer = cu.ID
		}
	}
	o.user, o.otherUser = f.uid(plainUser), f.uid(otherAuditor)
	o.group, o.check = f.siteObjects(exampleHost, "example")
	o.otherGroup, o.otherCheck = f.siteObjects(otherHost, "other")
	return o
}

// siteObjects adds a group and a header check at host, as the global administrator.
func (f *fixture) siteObjects(host, name string) (group, check string) {
	f.t.Helper()
	ctx := context.Background()
	c := f.caller(adminUser, host)
	_, err := f.app.Management.AddGroups(ctx, c, []app.GroupInput{{Groupname: ptr(name + "-group"), Email: ptr("g@" + name + ".test")}})
	require.NoError(f.t, err)
	_, err = f.app.Management.AddHeaderChecks(ctx, c, []app.HeaderCheckInput{{Pattern: "^X-" + name, Tag: name + "-tag"}})
	require.NoError(f.t, err)
	groups, err := f.app.Management.Groups(ctx, c)
	require.NoError(f.t, err)
	checks, err := f.app.Management.HeaderChecks(ctx, c)
	require.NoError(f.t, err)
	require.Len(f.t, groups, 1)
	require.Len(f.t, checks, 1)
	return groups[0].ID, checks[0].ID
}

// caller is user as the management use cases see them at host.
func (f *fixture) caller(user, host string) app.Caller {
	f.t.Helper()
	u, err := f.users.ByUsername(context.Background(), user)
	require.NoError(f.t, err)
	p := identity.Principal{UID: u.UID, Username: u.Username, Email: u.Email, Domain: u.Domain, Role: u.Role}
	scope, err := f.app.Tenancy.Resolve(context.Background(), p, host)
	require.NoError(f.t, err)
	return app.Caller{Scope: scope, Meta: domain.Metadata{Actor: "setup"}}
}

func (f *fixture) uid(user string) int64 {
	f.t.Helper()
	u, err := f.users.ByUsername(context.Background(), user)
	require.NoError(f.t, err)
	return u.UID
}

func ptr(s string) *string { return &s }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
