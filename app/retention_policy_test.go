package app_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

func TestRetentionPolicyMostSpecificWins(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, database.SQLite)
	rule := func(kind, value string, days int) {
		t.Helper()
		_, err := db.Exec(`INSERT INTO retention_rules (id, tenant_id, kind, value, days, created_by, created_at) VALUES (?, 'acme', ?, ?, ?, 'test', '2026-01-01T00:00:00Z')`,
			kind+value, kind, value, days)
		require.NoError(t, err)
	}
	rule(app.RetentionDomain, "acme.test", 3000)
	rule(app.RetentionDomain, "vendor.test", 700)
	rule(app.RetentionSender, "ceo@acme.test", 9000)
	rule(app.RetentionRecipient, "ceo@acme.test", 8000)
	rule(app.RetentionRecipient, "hr@acme.test", 100)
	_, err := db.Exec(`INSERT INTO customers (customer_id, domain, retention_days, enable_purge, enabled, created) VALUES ('acme', 'acme.test', 365, 1, 1, 0)`)
	require.NoError(t, err)
	p, err := app.NewRetentionPolicy(db, app.RetentionPolicyConfig{Refresh: time.Hour})
	require.NoError(t, err)
	from := func(a string) analyzer.Address {
		return analyzer.Address{Mailbox: analyzer.Mailbox{Key: a}, Role: analyzer.Sender}
	}
	to := func(a string) analyzer.Address {
		return analyzer.Address{Mailbox: analyzer.Mailbox{Key: a}, Role: analyzer.Recipient}
	}
	days := func(tenant string, roles ...analyzer.Address) int {
		d, ok := p.Retention(tenant, roles)
		if !ok {
			return -1
		}
		return int(d / (24 * time.Hour))
	}
	assert.Equal(t, 9000, days("acme", from("ceo@acme.test"), to("x@vendor.test")), "an address rule beats the domain rules")
	assert.Equal(t, 100, days("acme", from("x@vendor.test"), to("hr@acme.test")), "even a shorter one: the most specific wins")
	assert.Equal(t, 9000, days("acme", from("ceo@acme.test"), to("hr@acme.test")), "two address rules: the longer")
	assert.Equal(t, 8000, days("acme", from("x@vendor.test"), to("ceo@acme.test")), "the role counts: ceo as recipient")
	assert.Equal(t, 3000, days("acme", from("x@vendor.test"), to("bob@acme.test")), "two domain rules: the longer")
	assert.Equal(t, 700, days("acme", from("x@vendor.test"), to("y@else.test")))
	assert.Equal(t, 365, days("acme", from("x@else.test")), "no rule: the customer's retention_days")
	assert.Equal(t, -1, days("beta", from("ceo@acme.test")), "another tenant's rules do not apply; no customer: the default")
}
