package app_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
)

func TestExportsConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := app.ExportsConfigFromEnv(env(nil), "/data")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("/data", "export"), c.Dir, "DIR_EXPORT defaults under the data directory")
	assert.Equal(t, []int{3, 1, 4, 500}, []int{c.MaxGlobal, c.MaxTenant, c.Workers, c.ProgressItems})
	assert.Equal(t, time.Second, c.ProgressInterval)

	c, err = app.ExportsConfigFromEnv(env(map[string]string{
		"DIR_EXPORT": "/srv/exports", "EDISCOVERY_MAX_GLOBAL_EXPORTS": "5", "EDISCOVERY_MAX_TENANT_EXPORTS": "2", "EDISCOVERY_WORKERS": "32",
	}), "/data")
	require.NoError(t, err)
	assert.Equal(t, "/srv/exports", c.Dir)
	assert.Equal(t, []int{5, 2, 32}, []int{c.MaxGlobal, c.MaxTenant, c.Workers})

	_, err = app.ExportsConfigFromEnv(env(map[string]string{
		"EDISCOVERY_MAX_GLOBAL_EXPORTS": "0", "EDISCOVERY_MAX_TENANT_EXPORTS": "many", "EDISCOVERY_WORKERS": "33",
	}), "/data")
	require.Error(t, err)
	assert.True(t, errors.Is(err, app.ErrConfig))
	for _, name := range []string{"EDISCOVERY_MAX_GLOBAL_EXPORTS", "EDISCOVERY_MAX_TENANT_EXPORTS", "EDISCOVERY_WORKERS"} {
		assert.Contains(t, err.Error(), name, "every problem is reported")
	}
}

func TestNewExportsRejects(t *testing.T) {
	t.Parallel()
	_, err := app.NewExports(nil, nil, app.ExportsConfig{Dir: t.TempDir()})
	assert.Error(t, err, "nil dependencies")
	f := newExportFixture(t, "sqlite", app.ExportsConfig{})
	_, err = app.NewExports(f.store, f.arc, app.ExportsConfig{})
	assert.ErrorIs(t, err, app.ErrConfig, "no DIR_EXPORT")
	_, err = app.NewExports(f.store, f.arc, app.ExportsConfig{Dir: t.TempDir(), ProgressItems: 5000})
	assert.ErrorIs(t, err, app.ErrConfig, "a progress batch over the projection's limit")
}
