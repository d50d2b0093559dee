package app_test

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := app.ConfigFromEnv(envOf(nil))
	require.NoError(t, err)
	assert.Equal(t, app.Config{
		DataDir:            "./data",
		DatabaseURL:        "sqlite://data/mailledger.db",
		HTTPAddr:           "127.0.0.1:8080",
		LedgerOrigin:       "mailledger",
		CheckpointEvery:    1000,
		CheckpointInterval: 60 * time.Second,
		RetentionDays:      3650,
		SpamPolicy:         app.SpamKeep,
		SpamRetentionDays:  3650,
		LogLevel:           slog.LevelInfo,
		DistinctApprover:   true,
		PurgeInterval:      time.Hour,
		ConsoleSessionIdle: 30 * time.Minute,
		Exports: app.ExportsConfig{Dir: "data/export", MaxGlobal: 3, MaxTenant: 1, Workers: 4,
			ProgressItems: 500, ProgressInterval: time.Second, MaxInFlightBytes: app.DefaultMaxInFlightBytes},
	}, c)
	assert.True(t, c.BootstrapAdmin.IsZero())
	assert.Equal(t, "data/keys", c.KeyDir())
	assert.Equal(t, "data/store", c.StoreDir())
	assert.Equal(t, 3650*24*time.Hour, c.Retention())
}

func TestArchiveAndTenancyConfig(t *testing.T) {
	t.Parallel()
	c, err := app.ConfigFromEnv(envOf(map[string]string{
		"MAILLEDGER_BOOTSTRAP_AUDITOR": "dpo:s3cret:x",
		"MULTITENANCY":                 "1",
		"MAILLEDGER_RETENTION_DAYS":    "30",
		"SPAM_HEADER_LINE":             " X-Spam-Flag: YES ",
	}))
	require.NoError(t, err)
	assert.Equal(t, app.Credentials{Username: "dpo", Password: "s3cret:x"}, c.BootstrapAuditor)
	assert.True(t, c.Multitenancy)
	assert.Equal(t, 30*24*time.Hour, c.Retention())
	assert.Equal(t, "X-Spam-Flag: YES", c.SpamHeader)
	assert.Equal(t, "a.test", app.TenantOf(c.Multitenancy, "a.test"))
	assert.Equal(t, app.DefaultTenant, app.TenantOf(false, "a.test"))
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "all", c)
	assert.NotContains(t, buf.String(), "s3cret")
	assert.Contains(t, buf.String(), `"bootstrap_auditor":"dpo"`)

	_, err = app.ConfigFromEnv(envOf(map[string]string{
		"MAILLEDGER_BOOTSTRAP_AUDITOR": "hunter2",
		"MULTITENANCY":                 "maybe",
		"MAILLEDGER_RETENTION_DAYS":    "99999",
		"SPAM_HEADER_LINE":             "spam",
	}))
	require.Error(t, err)
	for _, name := range []string{"MAILLEDGER_BOOTSTRAP_AUDITOR", "MULTITENANCY", "MAILLEDGER_RETENTION_DAYS", "SPAM_HEADER_LINE"} {
		assert.Contains(t, err.Error(), name)
	}
	assert.NotContains(t, err.Error(), "hunter2")
	_, err = app.ConfigFromEnv(envOf(map[string]string{"MAILLEDGER_RETENTION_DAYS": "0"}))
	assert.ErrorContains(t, err, "MAILLEDGER_RETENTION_DAYS", "zero days keeps nothing")
}

func TestConfigFromEnvironment(t *testing.T) {
	t.Parallel()
	c, err := app.ConfigFromEnv(envOf(map[string]string{
		"MAILLEDGER_DATA_DIR":            "/var/lib/mailledger",
		"HTTP_ADDR":                      "0.0.0.0:9000",
		"MAILLEDGER_BOOTSTRAP_ADMIN":     "root:pa:ss",
		"MAILLEDGER_LEDGER_KEY_FILE":     "/etc/mailledger/ledger.key",
		"MAILLEDGER_LEDGER_ORIGIN":       "archive.example.com/ledger",
		"MAILLEDGER_CHECKPOINT_EVERY":    "50",
		"MAILLEDGER_CHECKPOINT_INTERVAL": "5m",
		"LOG_LEVEL":                      "debug",
	}))
	require.NoError(t, err)
	assert.Equal(t, "sqlite:///var/lib/mailledger/mailledger.db", c.DatabaseURL, "the default follows the data dir")
	assert.Equal(t, "0.0.0.0:9000", c.HTTPAddr)
	assert.Equal(t, app.Credentials{Username: "root", Password: "pa:ss"}, c.BootstrapAdmin, "the password may hold ':'")
	assert.Equal(t, "/etc/mailledger/ledger.key", c.LedgerKeyFile)
	assert.Equal(t, "archive.example.com/ledger", c.LedgerOrigin)
	assert.Equal(t, int64(50), c.CheckpointEvery)
	assert.Equal(t, 5*time.Minute, c.CheckpointInterval)
	assert.Equal(t, slog.LevelDebug, c.LogLevel)
}

func TestConfigJoinsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := app.ConfigFromEnv(envOf(map[string]string{
		"HTTP_ADDR":                      "8080",
		"MAILLEDGER_BOOTSTRAP_ADMIN":     "admin:",
		"MAILLEDGER_LEDGER_ORIGIN":       "two words",
		"MAILLEDGER_CHECKPOINT_EVERY":    "0",
		"MAILLEDGER_CHECKPOINT_INTERVAL": "10ms",
		"LOG_LEVEL":                      "loud",
	}))
	require.Error(t, err)
	assert.True(t, errors.Is(err, app.ErrConfig))
	for _, name := range []string{"HTTP_ADDR", "MAILLEDGER_BOOTSTRAP_ADMIN", "MAILLEDGER_LEDGER_ORIGIN",
		"MAILLEDGER_CHECKPOINT_EVERY", "MAILLEDGER_CHECKPOINT_INTERVAL", "LOG_LEVEL"} {
		assert.Contains(t, err.Error(), name)
	}
}

func TestConfigNeverShowsThePassword(t *testing.T) {
	t.Parallel()
	_, err := app.ConfigFromEnv(envOf(map[string]string{"MAILLEDGER_BOOTSTRAP_ADMIN": "hunter2"}))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2")

	c, err := app.ConfigFromEnv(envOf(map[string]string{
		"MAILLEDGER_BOOTSTRAP_ADMIN": "admin:hunter2",
		"DATABASE_URL":               "postgres://app:hunter2@db:5432/mailledger",
	}))
	require.NoError(t, err)
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "admin", c.BootstrapAdmin, "all", c)
	assert.NotContains(t, buf.String(), "hunter2")
	assert.Contains(t, buf.String(), `"admin":"admin"`)
	assert.Contains(t, buf.String(), `"database":"postgres://app:xxxxx@db:5432/mailledger"`)
}

func TestValidateRejectsAnEmptyConfig(t *testing.T) {
	t.Parallel()
	err := app.Config{}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "DATABASE_URL")
	assert.Contains(t, err.Error(), "MAILLEDGER_CHECKPOINT_EVERY")
}
