package handlers_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/handlers"
)

func TestHTTPConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	c, err := handlers.HTTPConfigFromEnv(env(nil))
	require.NoError(t, err)
	assert.Equal(t, handlers.HTTPConfig{ReadHeaderTimeout: 10 * time.Second, BodyTimeout: 30 * time.Second,
		WriteTimeout: time.Minute, DownloadWriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		MaxConnections: 1024}, c, "the documented defaults")

	c, err = handlers.HTTPConfigFromEnv(env(map[string]string{"HTTP_BODY_TIMEOUT": "5s", "HTTP_MAX_CONNECTIONS": "64",
		"METRICS_ADDR": "127.0.0.1:9100", "METRICS_TOKEN": "a-long-secret-token"}))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, c.BodyTimeout)
	assert.Equal(t, 64, c.MaxConnections)
	assert.Equal(t, "127.0.0.1:9100", c.MetricsAddr)
	logged := fmt.Sprint(slog.AnyValue(c).Resolve())
	assert.NotContains(t, logged, "a-long-secret-token", "the token is never logged")

	_, err = handlers.HTTPConfigFromEnv(env(map[string]string{"HTTP_WRITE_TIMEOUT": "soon", "HTTP_MAX_CONNECTIONS": "0",
		"METRICS_ADDR": "9100", "METRICS_TOKEN": "short-secret"}))
	require.ErrorIs(t, err, app.ErrConfig)
	for _, name := range []string{"HTTP_WRITE_TIMEOUT", "HTTP_MAX_CONNECTIONS", "METRICS_ADDR", "METRICS_TOKEN"} {
		assert.Contains(t, err.Error(), name, "every problem is named")
	}
	assert.False(t, strings.Contains(err.Error(), "short-secret"), "the token is not in the error")
}
