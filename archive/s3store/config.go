package s3store

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// ErrConfig marks a problem of the object store's configuration.
var ErrConfig = errors.New("s3 configuration")

// Secret is a value that must never reach a log: String and LogValue redact it.
type Secret string

// String shows only whether the secret is set.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "xxxxx"
}

// LogValue shows only whether the secret is set.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Reveal returns the secret itself, for the one place that needs it (the S3 client).
func (s Secret) Reveal() string { return string(s) }

// Config is the object store's configuration: the spec's s3_* keys of the daemon
// configuration. Read it with FromValues or FromEnv, which apply the defaults and validate.
type Config struct {
	// Hostname is s3_hostname, the store's host and port (no scheme).
	Hostname string
	// Region is s3_region; default DefaultRegion.
	Region string
	// AccessKey is s3_access_key.
	AccessKey Secret
	// SecretKey is s3_secret_key.
	SecretKey Secret
	// BucketPrefix is s3_bucket_prefix, put before the tenant's name to make its bucket's
	// name: empty, or domain-name labels without a dash, optionally ending with a dot.
	BucketPrefix string
	// UseSubdirs is s3_use_subdirs: spread each bucket's objects over the prefixes 00..ff.
	UseSubdirs bool
	// Secure is s3_secure: talk TLS (https) to the store. FromValues turns it on unless
	// s3_secure is 0; off, the keys' signatures and the mail go over the network in clear.
	Secure bool
	// Dir is s3_dir, the local staging directory where every file is written first.
	Dir string
	// Threads is s3_threads, the number of upload workers; default DefaultThreads.
	Threads int
}

// Defaults of the optional keys.
const (
	DefaultRegion  = "us-east-1"
	DefaultThreads = 4
	maxThreads     = 256
)

// Keys are the configuration keys the store reads, as the spec names them.
var Keys = []string{"s3_hostname", "s3_region", "s3_access_key", "s3_secret_key",
	"s3_bucket_prefix", "s3_use_subdirs", "s3_secure", "s3_dir", "s3_threads"}

// obsoleteKey is refused: every customer's files go to one bucket of its own.
const obsoleteKey = "s3_spread_in_buckets"

// FromEnv reads the configuration from the environment: each key in upper case
// (S3_HOSTNAME, …), as the service's other variables are.
func FromEnv(getenv func(string) string) (Config, error) {
	return FromValues(func(key string) string { return getenv(strings.ToUpper(key)) })
}

// FromValues reads the configuration with get, which answers a key as the spec spells
// it (s3_hostname, …) from a configuration file or any other source; "" means unset.
// With none of the keys set it returns the zero Config (not Enabled: the local store).
// Otherwise it applies the defaults and validates; the error joins every problem and never holds a
// key's secret.
func FromValues(get func(key string) string) (Config, error) {
	var problems []error
	if strings.TrimSpace(get(obsoleteKey)) != "" {
		problems = append(problems, fmt.Errorf("%w: %s is obsolete and must not be used: every customer's files go to a bucket of its own", ErrConfig, obsoleteKey))
	}
	if !anySet(get) {
		return Config{}, errors.Join(problems...) // no object store: the local file store
	}
	c := Config{
		Hostname:     strings.TrimSpace(get("s3_hostname")),
		Region:       strings.TrimSpace(get("s3_region")),
		AccessKey:    Secret(get("s3_access_key")),
		SecretKey:    Secret(get("s3_secret_key")),
		BucketPrefix: strings.TrimSpace(get("s3_bucket_prefix")),
		Dir:          strings.TrimSpace(get("s3_dir")),
	}
	var err error
	if c.UseSubdirs, err = parseSwitch("s3_use_subdirs", get("s3_use_subdirs"), false); err != nil {
		problems = append(problems, err)
	}
	if c.Secure, err = parseSwitch("s3_secure", get("s3_secure"), true); err != nil {
		problems = append(problems, err)
	}
	if c.Threads, err = parseThreads(get("s3_threads")); err != nil {
		problems = append(problems, err)
	}
	c.setDefaults()
	problems = append(problems, c.Validate())
	return c, errors.Join(problems...)
}

// anySet reports whether any of the store's keys has a value.
func anySet(get func(string) string) bool {
	for _, k := range Keys {
		if strings.TrimSpace(get(k)) != "" {
			return true
		}
	}
	return false
}

// Enabled reports whether an object store is configured (s3_hostname is set).
func (c Config) Enabled() bool { return c.Hostname != "" }

func (c *Config) setDefaults() {
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	if c.Threads == 0 {
		c.Threads = DefaultThreads
	}
}

// Validate checks the configuration and joins every problem it finds.
func (c Config) Validate() error {
	var problems []error
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.Hostname == "" || strings.Contains(c.Hostname, "/") {
		bad("s3_hostname %q must be host or host:port, without a scheme", c.Hostname)
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		bad("s3_access_key and s3_secret_key are required")
	}
	if err := ValidBucketPrefix(c.BucketPrefix); err != nil {
		bad("s3_bucket_prefix: %v", err)
	}
	if c.Dir == "" {
		bad("s3_dir (the staging directory) is required")
	}
	if c.Threads < 1 || c.Threads > maxThreads {
		bad("s3_threads must be between 1 and %d, got %d", maxThreads, c.Threads)
	}
	return errors.Join(problems...)
}

// LogValue shows the configuration with both keys redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("s3_hostname", c.Hostname),
		slog.String("s3_region", c.Region),
		slog.Any("s3_access_key", c.AccessKey),
		slog.Any("s3_secret_key", c.SecretKey),
		slog.String("s3_bucket_prefix", c.BucketPrefix),
		slog.Bool("s3_use_subdirs", c.UseSubdirs),
		slog.Bool("s3_secure", c.Secure),
		slog.String("s3_dir", c.Dir),
		slog.Int("s3_threads", c.Threads),
	)
}

// String is LogValue's text, so that a %v of the configuration shows no key either.
func (c Config) String() string { return c.LogValue().String() }

func parseSwitch(name, v string, def bool) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return def, nil
	case "0", "false", "off", "no":
		return false, nil
	case "1", "true", "on", "yes":
		return true, nil
	}
	return false, fmt.Errorf("%w: %s must be 0 or 1, got %q", ErrConfig, name, v)
}

func parseThreads(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: s3_threads must be a positive integer, got %q", ErrConfig, v)
	}
	return n, nil
}
