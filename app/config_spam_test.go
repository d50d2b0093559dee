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

func TestSpamPolicyConfig(t *testing.T) {
	t.Parallel()
	c, err := app.ConfigFromEnv(envOf(map[string]string{
		"SPAM_HEADER_LINE":    "X-Spam-Flag: YES",
		"SPAM_RETENTION_DAYS": "30",
	}))
	require.NoError(t, err)
	assert.Equal(t, app.SpamKeep, c.SpamPolicy)
	assert.False(t, c.DiscardSpam())
	assert.Equal(t, 30*24*time.Hour, c.SpamRetention())
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "all", c)
	assert.Contains(t, buf.String(), `"spam":"X-Spam-Flag: YES: keep 30 days"`)

	c, err = app.ConfigFromEnv(envOf(map[string]string{"SPAM_HEADER_LINE": "X-Spam-Flag: YES", "SPAM_POLICY": "Discard"}))
	require.NoError(t, err)
	assert.True(t, c.DiscardSpam())

	c, err = app.ConfigFromEnv(envOf(map[string]string{"SPAM_HEADER_LINE": "X-Spam-Flag: YES"}))
	require.NoError(t, err)
	assert.Equal(t, c.Retention(), c.SpamRetention(), "spam is kept as long as other mail unless told otherwise")
}

func TestSpamPolicyConfigRefusals(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"two lines": {map[string]string{"SPAM_HEADER_LINE": "X-Spam-Flag: YES\nX-Spam-Status: Yes"},
			"SPAM_HEADER_LINE holds 2 lines: exactly one header line"},
		"two lines, CR LF": {map[string]string{"SPAM_HEADER_LINE": "X-Spam-Flag: YES\r\nX-Spam: 1"},
			"SPAM_HEADER_LINE holds 2 lines"},
		"no colon":       {map[string]string{"SPAM_HEADER_LINE": "spam"}, `SPAM_HEADER_LINE "spam" must be one header line`},
		"no value":       {map[string]string{"SPAM_HEADER_LINE": "X-Spam-Flag:"}, "must be one header line"},
		"space in name":  {map[string]string{"SPAM_HEADER_LINE": "X Spam: yes"}, "must be one header line"},
		"unknown policy": {map[string]string{"SPAM_HEADER_LINE": "X-Spam: yes", "SPAM_POLICY": "quarantine"}, `SPAM_POLICY must be "keep" or "discard", got "quarantine"`},
		"longer than other mail": {map[string]string{"SPAM_HEADER_LINE": "X-Spam: yes", "MAILLEDGER_RETENTION_DAYS": "30", "SPAM_RETENTION_DAYS": "31"},
			"SPAM_RETENTION_DAYS must be between 1 and MAILLEDGER_RETENTION_DAYS (30), got 31"},
		"not a number":            {map[string]string{"SPAM_HEADER_LINE": "X-Spam: yes", "SPAM_RETENTION_DAYS": "a week"}, "SPAM_RETENTION_DAYS must be a positive integer"},
		"policy without the line": {map[string]string{"SPAM_POLICY": "discard"}, "SPAM_POLICY and SPAM_RETENTION_DAYS need SPAM_HEADER_LINE"},
		"retention without line":  {map[string]string{"SPAM_RETENTION_DAYS": "7"}, "need SPAM_HEADER_LINE"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := app.ConfigFromEnv(envOf(tc.env))
			require.ErrorIs(t, err, app.ErrConfig)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
