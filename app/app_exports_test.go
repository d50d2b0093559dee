package app_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/internal/testenv"
)

// TestApplicationWithExports: ApplicationConfig.Exports gives the Application its exports
// over the archive; without the archive, or with a bad configuration, New refuses; without
// Exports there are none.
func TestApplicationWithExports(t *testing.T) {
	t.Parallel()
	f := newErasureFixture(t, database.SQLite)
	signer, _ := testenv.Signer(t, f.store, "app-test")

	a, err := app.New(f.store, signer, app.ApplicationConfig{Archive: f.arc, Exports: &app.ExportsConfig{Dir: t.TempDir()}})
	require.NoError(t, err)
	assert.NotNil(t, a.Exports)
	a, err = app.New(f.store, signer, app.ApplicationConfig{Archive: f.arc})
	require.NoError(t, err)
	assert.Nil(t, a.Exports, "no exports unless asked for")
	_, err = app.New(f.store, signer, app.ApplicationConfig{Exports: &app.ExportsConfig{Dir: t.TempDir()}})
	assert.Error(t, err, "exports need the archive")
	_, err = app.New(f.store, signer, app.ApplicationConfig{Archive: f.arc, Exports: &app.ExportsConfig{}})
	assert.ErrorIs(t, err, app.ErrConfig, "no DIR_EXPORT")
}
