package app_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
)

// TestConfigReadsTheExportSettings: DIR_EXPORT follows the data directory unless set, the
// EDISCOVERY_* limits are read, and the start-up log shows them.
func TestConfigReadsTheExportSettings(t *testing.T) {
	t.Parallel()
	c, err := app.ConfigFromEnv(envOf(map[string]string{"MAILLEDGER_DATA_DIR": "/srv/ml"}))
	require.NoError(t, err)
	assert.Equal(t, "/srv/ml/export", c.Exports.Dir)

	c, err = app.ConfigFromEnv(envOf(map[string]string{
		"DIR_EXPORT": "/exports", "EDISCOVERY_MAX_GLOBAL_EXPORTS": "6", "EDISCOVERY_MAX_TENANT_EXPORTS": "2",
		"EDISCOVERY_WORKERS": "8",
	}))
	require.NoError(t, err)
	assert.Equal(t, []any{"/exports", 6, 2, 8}, []any{c.Exports.Dir, c.Exports.MaxGlobal, c.Exports.MaxTenant, c.Exports.Workers})
	assert.Nil(t, c.Exports.Logger, "the logger is not configuration")
	require.NoError(t, c.Validate())
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "all", c)
	for _, field := range []string{`"dir_export":"/exports"`, `"ediscovery_max_global_exports":6`,
		`"ediscovery_max_tenant_exports":2`, `"ediscovery_workers":8`} {
		assert.Contains(t, buf.String(), field)
	}
}

// TestConfigJoinsExportProblemsOnce: export problems join the others, each named once.
func TestConfigJoinsExportProblemsOnce(t *testing.T) {
	t.Parallel()
	_, err := app.ConfigFromEnv(envOf(map[string]string{
		"EDISCOVERY_WORKERS": "33", "EDISCOVERY_MAX_TENANT_EXPORTS": "none", "HTTP_ADDR": "8080",
	}))
	require.ErrorIs(t, err, app.ErrConfig)
	for _, name := range []string{"EDISCOVERY_WORKERS", "EDISCOVERY_MAX_TENANT_EXPORTS", "HTTP_ADDR"} {
		assert.Equal(t, 1, bytes.Count([]byte(err.Error()), []byte(name)), "%s once in %q", name, err)
	}
	err = app.Config{}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "DIR_EXPORT", "Validate checks the export settings too")
}
