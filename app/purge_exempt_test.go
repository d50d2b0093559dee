package app_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestPurgeHonoursEnablePurge: a customer with enable_purge 0 keeps its expired mail, one
// with 1 has it purged, and a tenant of no customer follows the retention as before.
func TestPurgeHonoursEnablePurge(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newErasureFixture(t, d)
		for _, q := range []string{
			`INSERT INTO customers (customer_id, domain, enable_purge, enabled, created) VALUES ('keeper', 'keeper.test', 0, 1, 0)`,
			`INSERT INTO customers (customer_id, domain, enable_purge, enabled, created) VALUES ('purger', 'purger.test', 1, 1, 0)`,
		} {
			_, err := f.db.Exec(q)
			require.NoError(t, err)
		}
		mails := generated(4)
		kept := f.archiveMail("keeper", mails)
		purged := f.archiveMail("purger", mails)
		plain := f.archiveMail("other", mails)
		_, err := f.db.Exec(f.db.Rebind(`UPDATE metadata SET retained = ?`), database.TimeArg(d, time.Now().AddDate(-1, 0, 0)))
		require.NoError(t, err)
		purger, err := app.NewPurger(f.store, f.arc, app.PurgerConfig{})
		require.NoError(t, err)
		res, err := purger.RunOnce(f.ctx)
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"purger": len(purged), "other": len(plain)}, res.ByTenant)
		for _, id := range kept {
			assert.True(t, f.hasFile(id), "enable_purge 0 keeps message %d", id)
		}
		for _, id := range append(purged, plain...) {
			assert.False(t, f.hasFile(id), "message %d past retention is purged", id)
		}
	})
}
