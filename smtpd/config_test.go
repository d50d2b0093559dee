package smtpd

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := ConfigFromEnv(envOf(nil), "/data")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:2525", c.Addr)
	assert.Equal(t, int64(50<<20), c.MaxMessageBytes)
	assert.Equal(t, 100, c.MaxRecipients)
	assert.Equal(t, 100, c.MaxConnections)
	assert.Equal(t, 50, c.MaxConnectionsPerIP)
	assert.Equal(t, 5*time.Minute, c.IdleTimeout)
	assert.Equal(t, 10*time.Minute, c.DataTimeout)
	assert.True(t, c.StartTLS)
	assert.Equal(t, "/data/tls/smtp.crt", c.CertFile)
	assert.Equal(t, "/data/tls/smtp.key", c.KeyFile)
	tenant, ok := c.Tenants.For("anyone@anywhere.test")
	assert.True(t, ok)
	assert.Equal(t, "default", tenant)
}

func TestConfigProblemsAreJoined(t *testing.T) {
	t.Parallel()
	_, err := ConfigFromEnv(envOf(map[string]string{
		"SMTP_ADDR": "nohost", "SMTP_MAX_MESSAGE_BYTES": "-1", "SMTP_IDLE_TIMEOUT": "soon",
		"SMTP_STARTTLS": "yes", "SMTP_TENANT_DOMAINS": "a.test=ok,broken,b.test=../x",
		"SMTP_TLS_CERT_FILE": "/only/cert",
	}), "/data")
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrConfig))
	for _, want := range []string{"SMTP_ADDR", "SMTP_MAX_MESSAGE_BYTES", "SMTP_IDLE_TIMEOUT", "SMTP_STARTTLS",
		`"broken" is not domain=tenant`, `"../x" is not a tenant id`, "set together"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestTenantsMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pairs, def, rcpt, want string
		ok                           bool
	}{
		{"no mapping: default", "", "", "x@a.test", "", false}, // ParseTenants alone: setDefaults adds "default"
		{"mapped domain", "a.test=alpha", "", "x@A.Test", "alpha", true},
		{"trailing dot", "a.test.=alpha", "", "x@a.test", "alpha", true},
		{"unmapped without default", "a.test=alpha", "", "x@b.test", "", false},
		{"unmapped with default", "a.test=alpha", "rest", "x@b.test", "rest", true},
		{"subdomain needs its own pair", "a.test=alpha", "", "x@sub.a.test", "", false},
		{"no domain", "a.test=alpha", "", "postmaster", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := ParseTenants(tt.pairs, tt.def)
			require.NoError(t, err)
			got, ok := ts.For(tt.rcpt)
			assert.Equal(t, tt.ok, ok, "ok")
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTenantsSplitKeepsEachTenantsRecipients(t *testing.T) {
	t.Parallel()
	ts, err := ParseTenants("a.test=alpha,b.test=beta", "")
	require.NoError(t, err)
	tenants, by := ts.split([]string{"1@b.test", "2@a.test", "3@b.test", "4@c.test"})
	assert.Equal(t, []string{"beta", "alpha"}, tenants)
	assert.Equal(t, []string{"1@b.test", "3@b.test"}, by["beta"])
	assert.Equal(t, []string{"2@a.test"}, by["alpha"])
}

func TestCommitLingerSetting(t *testing.T) {
	for v, want := range map[string]time.Duration{"": DefaultCommitLinger, "0": -1, "5ms": 5 * time.Millisecond} {
		cfg, err := ConfigFromEnv(func(k string) string {
			if k == "SMTP_COMMIT_LINGER" {
				return v
			}
			return ""
		}, t.TempDir())
		require.NoError(t, err, v)
		assert.Equal(t, want, cfg.CommitLinger, "SMTP_COMMIT_LINGER=%q", v)
	}
	_, err := ConfigFromEnv(func(k string) string {
		if k == "SMTP_COMMIT_LINGER" {
			return "soon"
		}
		return ""
	}, t.TempDir())
	assert.ErrorContains(t, err, "SMTP_COMMIT_LINGER")
}

func TestCommittersSetting(t *testing.T) {
	for v, want := range map[string]int{"": 0, "1": 1, "3": 3, "16": 16} {
		cfg, err := ConfigFromEnv(envOf(map[string]string{"SMTP_COMMITTERS": v}), t.TempDir())
		require.NoError(t, err, v)
		assert.Equal(t, want, cfg.Committers, "SMTP_COMMITTERS=%q (0: by the database)", v)
	}
	for _, v := range []string{"0", "-2", "two", "17"} {
		_, err := ConfigFromEnv(envOf(map[string]string{"SMTP_COMMITTERS": v}), t.TempDir())
		assert.ErrorContains(t, err, "SMTP_COMMITTERS", v)
	}
}
