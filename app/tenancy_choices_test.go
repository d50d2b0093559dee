package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/identity"
)

// TestTenantChoices: the tenants a global administrator may act in are default, every
// customer's, and the tenant of every user domain no customer has (directly or by a
// domain mapping); without MULTITENANCY, default alone.
func TestTenantChoices(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		db := dbtest.Open(t, d)
		ctx := context.Background()
		for _, q := range []string{
			`INSERT INTO customers (customer_id, domain, retention_days, enable_purge, enabled, created) VALUES ('acme', 'acme.test', 365, 1, 1, 0)`,
			`INSERT INTO domains (domain, mapped, ldap_id) VALUES ('acme-corp.test', 'acme.test', '')`,
		} {
			_, err := db.Exec(q)
			require.NoError(t, err)
		}
		users := identity.NewUsers(db)
		for _, u := range []identity.User{
			{Username: "root", Domain: identity.LocalDomain, Role: identity.RoleAdmin},
			{Username: "a", Domain: "acme.test", Role: identity.RoleUser},
			{Username: "b", Domain: "acme-corp.test", Role: identity.RoleUser},
			{Username: "c", Domain: "zeta.test", Role: identity.RoleAuditor},
			{Username: "d", Domain: "beta.test", Role: identity.RoleUser},
		} {
			u.PasswordHash = "x"
			_, err := users.Add(ctx, u)
			require.NoError(t, err)
		}
		multi, err := app.NewTenancy(db, true)
		require.NoError(t, err)
		got, err := multi.Tenants(ctx)
		require.NoError(t, err)
		assert.Equal(t, []app.TenantChoice{{Tenant: "default"}, {Tenant: "acme", Customer: "acme"}, {Tenant: "beta.test"}, {Tenant: "zeta.test"}}, got)
		for tenant, want := range map[string]bool{"acme": true, "zeta.test": true, "default": true, "acme.test": false, "local": false} {
			ok, err := multi.HasTenant(ctx, tenant)
			require.NoError(t, err)
			assert.Equal(t, want, ok, tenant)
		}
		single, err := app.NewTenancy(db, false)
		require.NoError(t, err)
		got, err = single.Tenants(ctx)
		require.NoError(t, err)
		assert.Equal(t, []app.TenantChoice{{Tenant: "default"}}, got)
		assert.False(t, single.Multitenancy())
	})
}
