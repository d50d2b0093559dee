package s3store_test

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/s3store"
)

func values(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigFromValues(t *testing.T) {
	c, err := s3store.FromValues(values(map[string]string{
		"s3_hostname": "s3.example.net:9000", "s3_access_key": "AK", "s3_secret_key": "SK",
		"s3_bucket_prefix": "archive.", "s3_use_subdirs": "1", "s3_secure": "0",
		"s3_dir": "/var/stage", "s3_threads": "8",
	}))
	require.NoError(t, err)
	assert.True(t, c.Enabled())
	assert.Equal(t, s3store.Config{Hostname: "s3.example.net:9000", Region: s3store.DefaultRegion,
		AccessKey: "AK", SecretKey: "SK", BucketPrefix: "archive.", UseSubdirs: true, Secure: false,
		Dir: "/var/stage", Threads: 8}, c)
}

func TestConfigFromEnvUsesUpperCaseNames(t *testing.T) {
	c, err := s3store.FromEnv(values(map[string]string{
		"S3_HOSTNAME": "h:1", "S3_ACCESS_KEY": "a", "S3_SECRET_KEY": "s", "S3_DIR": "/d",
	}))
	require.NoError(t, err)
	assert.Equal(t, "h:1", c.Hostname)
	assert.True(t, c.Secure, "TLS unless s3_secure=0")
	assert.Equal(t, s3store.DefaultThreads, c.Threads)
}

func TestConfigUnsetIsTheLocalStore(t *testing.T) {
	c, err := s3store.FromEnv(values(nil))
	require.NoError(t, err)
	assert.False(t, c.Enabled())
}

func TestConfigRefusesSpreadInBuckets(t *testing.T) {
	_, err := s3store.FromValues(values(map[string]string{"s3_spread_in_buckets": "1"}))
	require.ErrorIs(t, err, s3store.ErrConfig)
	assert.Contains(t, err.Error(), "s3_spread_in_buckets is obsolete")
}

func TestConfigJoinsEveryProblem(t *testing.T) {
	_, err := s3store.FromValues(values(map[string]string{
		"s3_hostname": "https://h", "s3_bucket_prefix": "a-b", "s3_threads": "zero", "s3_secure": "maybe",
	}))
	require.ErrorIs(t, err, s3store.ErrConfig)
	for _, want := range []string{"s3_hostname", "s3_access_key", "s3_bucket_prefix", "s3_dir", "s3_threads", "s3_secure"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestConfigNeverShowsTheKeys(t *testing.T) {
	c := s3store.Config{Hostname: "h", AccessKey: "AKIDSECRETLY", SecretKey: "wJalrXUtnFEMI", Dir: "/d"}
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("start", "s3", c)
	for _, out := range []string{b.String(), fmt.Sprint(c), fmt.Sprintf("%+v", c), c.String()} {
		assert.NotContains(t, out, "AKIDSECRETLY")
		assert.NotContains(t, out, "wJalrXUtnFEMI")
	}
	_, err := s3store.FromValues(values(map[string]string{"s3_secret_key": "wJalrXUtnFEMI"}))
	assert.NotContains(t, err.Error(), "wJalrXUtnFEMI")
}

func TestValidBucketPrefix(t *testing.T) {
	tests := []struct {
		prefix string
		ok     bool
	}{
		{"", true},
		{"archive", true},
		{"archive.", true},
		{"mail.archive.", true},
		{"ml2026", true},
		{"mail-archive", false},  // no dash
		{"Archive", false},       // no capitals in a bucket name
		{".archive", false},      // starts with a dot
		{"mail..archive", false}, // empty label
		{"mail_archive", false},  // not a domain-name character
		{"archive..", false},     // ends with two dots
		{strings.Repeat("a", 61), false},
	}
	for _, tc := range tests {
		err := s3store.ValidBucketPrefix(tc.prefix)
		assert.Equal(t, tc.ok, err == nil, "prefix %q: got %v", tc.prefix, err)
	}
}

func TestBucketName(t *testing.T) {
	tests := []struct {
		prefix, tenant, want string
	}{
		{"", "default", "default"},
		{"archive.", "acme", "archive.acme"},
		{"ml", "example.com", "mlexample.com"},
		{"", "acme-corp.com", "acme-corp.com"},
		{"", "ab", ""},                    // shorter than 3
		{"", "Acme", ""},                  // capitals
		{"", "acme_corp", ""},             // underscore
		{"", "192.168.1.1", ""},           // looks like an address
		{"", strings.Repeat("a", 64), ""}, // longer than 63
		{"archive.", "-acme", ""},         // ".-"
		{"", "acme.", ""},                 // ends with a dot
	}
	for _, tc := range tests {
		got, err := s3store.BucketName(tc.prefix, tc.tenant)
		if tc.want == "" {
			assert.True(t, errors.Is(err, archive.ErrBadKey), "%q+%q: got %q, %v; want ErrBadKey", tc.prefix, tc.tenant, got, err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
}
