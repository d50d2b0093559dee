package app_test

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
)

func TestErasureConfig(t *testing.T) {
	t.Parallel()
	c, err := app.ConfigFromEnv(envOf(map[string]string{
		"GDPR_DISTINCT_APPROVER":    "0",
		"PDFSERVICE_URL":            " http://pdf:s3cret@gotenberg:3000 ",
		"MAILLEDGER_PURGE_INTERVAL": "15m",
	}))
	require.NoError(t, err)
	assert.False(t, c.DistinctApprover)
	assert.Equal(t, "http://pdf:s3cret@gotenberg:3000", c.PDFServiceURL)
	assert.Equal(t, 15*time.Minute, c.PurgeInterval)
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "all", c)
	assert.NotContains(t, buf.String(), "s3cret", "the PDF service's password is never logged")
	assert.Contains(t, buf.String(), `"purge_interval":"15m0s"`)

	c, err = app.ConfigFromEnv(envOf(map[string]string{"MAILLEDGER_PURGE_INTERVAL": "0", "GDPR_DISTINCT_APPROVER": "1"}))
	require.NoError(t, err)
	assert.Zero(t, c.PurgeInterval, "0 turns the schedule off")
	assert.True(t, c.DistinctApprover)
}

func TestErasureConfigProblemsAreJoined(t *testing.T) {
	t.Parallel()
	_, err := app.ConfigFromEnv(envOf(map[string]string{
		"GDPR_DISTINCT_APPROVER":    "sometimes",
		"PDFSERVICE_URL":            "gotenberg:3000",
		"MAILLEDGER_PURGE_INTERVAL": "-1h",
	}))
	require.ErrorIs(t, err, app.ErrConfig)
	for _, name := range []string{"GDPR_DISTINCT_APPROVER", "PDFSERVICE_URL", "MAILLEDGER_PURGE_INTERVAL"} {
		assert.Contains(t, err.Error(), name)
	}
	_, err = app.ConfigFromEnv(envOf(map[string]string{"MAILLEDGER_PURGE_INTERVAL": "10ms"}))
	require.ErrorIs(t, err, app.ErrConfig)
	assert.Contains(t, err.Error(), "at least 1s")
	_, err = app.ConfigFromEnv(envOf(map[string]string{"PDFSERVICE_URL": "http://u:p%zz@host"}))
	require.ErrorIs(t, err, app.ErrConfig)
	assert.NotContains(t, err.Error(), "p%zz", "an unparsable URL is not echoed")
}
