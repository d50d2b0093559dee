package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
)

// TestExportsRunStoppedAtOnceIsNotAFailure: a shutdown that comes while Run is still
// starting (recovering or admitting jobs) ends Run without an error, as a later one does;
// serve's SIGTERM right after its start logged "shutdown incomplete" and exited 1.
func TestExportsRunStoppedAtOnceIsNotAFailure(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t, database.SQLite, app.ExportsConfig{})
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	assert.NoError(t, f.x.Run(ctx))
}
