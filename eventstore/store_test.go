package eventstore_test

import (
	"testing"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore/storetest"
)

// TestStore runs the conformance suite on SQLite, PostgreSQL and MySQL.
func TestStore(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		storetest.Run(t, func(t testing.TB) *database.DB { return dbtest.Open(t, d) })
	})
}
