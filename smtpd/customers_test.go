package smtpd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
)

// TestTenantsFromTheCustomers: under MULTITENANCY=1 a recipient's tenant is the customer
// whose domain (or a domain mapped to it) is the recipient's; mail with recipients of two
// customers is archived once for each; a domain of no customer is refused at RCPT TO.
func TestTenantsFromTheCustomers(t *testing.T) {
	r := startReceiverAdjusted(t, nil, archive.Options{}, func(cfg *Config, db *database.DB) {
		for _, q := range []string{
			`INSERT INTO customers (customer_id, domain, enable_purge, enabled, created) VALUES ('acme', 'acme.test', 1, 1, 0)`,
			`INSERT INTO customers (customer_id, domain, enable_purge, enabled, created) VALUES ('beta', 'beta.test', 1, 1, 0)`,
			`INSERT INTO domains (domain, mapped, ldap_id) VALUES ('acme-corp.test', 'acme.test', '')`,
		} {
			_, err := db.Exec(q)
			require.NoError(t, err)
		}
		tenancy, err := app.NewTenancy(db, true)
		require.NoError(t, err)
		cfg.Tenants = cfg.Tenants.WithLookup(app.NewDomainTenants(tenancy).Tenant)
	})
	res := r.smtplib(message("two-customers", "hello both"), []string{"bob@acme.test", "carol@beta.test", "dan@acme-corp.test"}, nil)
	require.Equal(t, []int{250, 250, 250}, res.Rcpt, "%+v", res)
	require.Equal(t, 250, res.Data, "%+v", res)
	assert.Equal(t, 1, r.count("acme"))
	assert.Equal(t, 1, r.count("beta"))
	assert.ElementsMatch(t, []string{"bob@acme.test", "dan@acme-corp.test"}, r.envelope(r.ids("acme")[0]), "each copy with its own customer's recipients")

	res = r.smtplib(message("stranger", "to nobody"), []string{"x@unknown.test", "bob@acme.test"}, nil)
	assert.Equal(t, []int{550, 250}, res.Rcpt, "a domain of no customer is refused: %+v", res)
	assert.Equal(t, 0, r.count("default"), "no default tenant takes it")
}
