package app_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
)

func TestConsoleSessionIdle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value string
		want  time.Duration
		bad   bool
	}{
		{"", 30 * time.Minute, false},
		{"5m", 5 * time.Minute, false},
		{"24h", 24 * time.Hour, false},
		{"25h", 0, true},
		{"0", 0, true},
		{"-1m", 0, true},
		{"soon", 0, true},
	} {
		c, err := app.ConfigFromEnv(envOf(map[string]string{"CONSOLE_SESSION_IDLE": tc.value}))
		if tc.bad {
			require.Error(t, err, "CONSOLE_SESSION_IDLE=%q", tc.value)
			assert.True(t, errors.Is(err, app.ErrConfig), "got %v; want ErrConfig", err)
			assert.Contains(t, err.Error(), "CONSOLE_SESSION_IDLE")
			continue
		}
		require.NoError(t, err, "CONSOLE_SESSION_IDLE=%q", tc.value)
		assert.Equal(t, tc.want, c.ConsoleSessionIdle, "CONSOLE_SESSION_IDLE=%q", tc.value)
	}
}
