package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mailledger/mailledger/database"
)

// Config is the service's configuration, read from the environment (docs/operations.md).
// Read it with ConfigFromEnv, which applies the defaults and validates it.
type Config struct {
	// DataDir is MAILLEDGER_DATA_DIR, the root of local state (database, keys, files).
	DataDir string
	// DatabaseURL is DATABASE_URL. It may hold a password: log it only through
	// database.Redact.
	DatabaseURL string
	// HTTPAddr is HTTP_ADDR, the API's listen address.
	HTTPAddr string
	// BootstrapAdmin is MAILLEDGER_BOOTSTRAP_ADMIN ("user:password"): an administrator
	// (domain "local") created at start unless a user of that name exists; zero when unset.
	BootstrapAdmin Credentials
	// BootstrapAuditor is MAILLEDGER_BOOTSTRAP_AUDITOR ("user:password"): an auditor
	// created at start unless a user of that name exists; zero when unset.
	BootstrapAuditor Credentials
	// Multitenancy is MULTITENANCY. Off (0, the default), every user works in the tenant
	// "default"; on (1), a user's domain is the tenant.
	Multitenancy bool
	// RetentionDays is MAILLEDGER_RETENTION_DAYS: how long archived mail is kept.
	RetentionDays int64
	// SpamHeader is SPAM_HEADER_LINE, the one header line ("Name: value") that marks a
	// message as spam; empty means none.
	SpamHeader string
	// Smarthost is the SMTP relay of restores (SMARTHOST_*).
	Smarthost SmarthostSettings
	// SpamPolicy is SPAM_POLICY: SpamKeep (the default) or SpamDiscard.
	SpamPolicy string
	// SpamRetentionDays is SPAM_RETENTION_DAYS: how long spam is kept (default
	// RetentionDays, at most that).
	SpamRetentionDays int64
	// LedgerKeyFile is MAILLEDGER_LEDGER_KEY_FILE, a signed-note private key. Empty means
	// $MAILLEDGER_DATA_DIR/keys/ledger.key, created on first start.
	LedgerKeyFile string
	// LedgerOrigin is MAILLEDGER_LEDGER_ORIGIN, the checkpoint origin line and the name
	// of a newly created key.
	LedgerOrigin string
	// CheckpointEvery is MAILLEDGER_CHECKPOINT_EVERY: sign a checkpoint after this many
	// new events.
	CheckpointEvery int64
	// CheckpointInterval is MAILLEDGER_CHECKPOINT_INTERVAL: sign a checkpoint of new
	// events at least this often.
	CheckpointInterval time.Duration
	// LogLevel is LOG_LEVEL: debug, info, warn or error.
	LogLevel slog.Level
	// DistinctApprover is GDPR_DISTINCT_APPROVER (true unless set to 0): the approver of
	// an erasure request must not be its creator. Turning it off lets one person create
	// and approve an erasure, which removes the segregation of duties.
	DistinctApprover bool
	// PDFServiceURL is PDFSERVICE_URL, the Gotenberg-compatible service that renders PDF
	// certificates; empty means PDF certificates answer 503 (the HTML ones still work).
	PDFServiceURL string
	// PurgeInterval is MAILLEDGER_PURGE_INTERVAL: how often serve runs a purge pass.
	// Zero disables the schedule (run `mailledger purge` instead); ConfigFromEnv uses
	// DefaultPurgeInterval when the variable is unset.
	PurgeInterval time.Duration
	// ConsoleSessionIdle is CONSOLE_SESSION_IDLE: a web console session not used for this
	// long ends (default 30 minutes, at most 24 hours).
	ConsoleSessionIdle time.Duration
	// Exports is DIR_EXPORT (default $MAILLEDGER_DATA_DIR/export) and the
	// EDISCOVERY_* limits, read by ExportsConfigFromEnv; its Logger stays nil.
	Exports ExportsConfig
}

// Credentials are a user name and password from the environment.
type Credentials struct {
	Username string
	Password string
}

// IsZero reports whether no credentials were configured.
func (c Credentials) IsZero() bool { return c.Username == "" && c.Password == "" }

// LogValue shows only the user name, so that the password never reaches a log.
func (c Credentials) LogValue() slog.Value { return slog.StringValue(c.Username) }

// String shows only the user name.
func (c Credentials) String() string { return c.Username }

// Configuration defaults (docs/operations.md).
const (
	DefaultDataDir            = "./data"
	DefaultHTTPAddr           = "127.0.0.1:8080"
	DefaultLedgerOrigin       = "mailledger"
	DefaultCheckpointEvery    = 1000
	DefaultCheckpointInterval = 60 * time.Second
	DefaultRetentionDays      = 3650
	DefaultPurgeInterval      = time.Hour
	// DefaultTenant is the one tenant of single-tenant mode (MULTITENANCY=0).
	DefaultTenant = "default"
)

// ErrConfig marks a configuration problem; the binary exits with code 2 on it.
var ErrConfig = errors.New("configuration")

// ConfigFromEnv reads the configuration with getenv (os.Getenv in the binary), applies
// the defaults and validates it. The error joins every problem found, each wrapping
// ErrConfig, and never contains a password.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	var problems []error
	c := Config{
		DataDir:       getenv("MAILLEDGER_DATA_DIR"),
		DatabaseURL:   getenv("DATABASE_URL"),
		HTTPAddr:      getenv("HTTP_ADDR"),
		LedgerKeyFile: getenv("MAILLEDGER_LEDGER_KEY_FILE"),
		LedgerOrigin:  getenv("MAILLEDGER_LEDGER_ORIGIN"),
		PDFServiceURL: strings.TrimSpace(getenv("PDFSERVICE_URL")),
	}
	problems = append(problems, c.readErasure(getenv)...)
	problems = append(problems, c.readSpam(getenv), c.readSmarthost(getenv), c.readConsole(getenv))
	var err error
	if c.BootstrapAdmin, err = parseCredentials("MAILLEDGER_BOOTSTRAP_ADMIN", getenv("MAILLEDGER_BOOTSTRAP_ADMIN")); err != nil {
		problems = append(problems, err)
	}
	if c.BootstrapAuditor, err = parseCredentials("MAILLEDGER_BOOTSTRAP_AUDITOR", getenv("MAILLEDGER_BOOTSTRAP_AUDITOR")); err != nil {
		problems = append(problems, err)
	}
	if c.Multitenancy, err = parseSwitch("MULTITENANCY", getenv("MULTITENANCY")); err != nil {
		problems = append(problems, err)
	}
	if c.RetentionDays, err = parseInt("MAILLEDGER_RETENTION_DAYS", getenv("MAILLEDGER_RETENTION_DAYS")); err != nil {
		problems = append(problems, err)
	}
	if c.CheckpointEvery, err = parseInt("MAILLEDGER_CHECKPOINT_EVERY", getenv("MAILLEDGER_CHECKPOINT_EVERY")); err != nil {
		problems = append(problems, err)
	}
	if c.CheckpointInterval, err = parseDuration("MAILLEDGER_CHECKPOINT_INTERVAL", getenv("MAILLEDGER_CHECKPOINT_INTERVAL")); err != nil {
		problems = append(problems, err)
	}
	if c.LogLevel, err = parseLevel(getenv("LOG_LEVEL")); err != nil {
		problems = append(problems, err)
	}
	c.setDefaults()
	c.Exports, err = ExportsConfigFromEnv(getenv, c.DataDir) // validated there
	c.Exports.Logger = nil
	problems = append(problems, err, c.validateService())
	return c, errors.Join(problems...)
}

// readErasure reads the variables of the erasure workflow and the purge schedule, which
// have defaults that an unset variable takes (an explicit 0 means off).
func (c *Config) readErasure(getenv func(string) string) []error {
	var problems []error
	var err error
	if c.DistinctApprover, err = parseSwitchDefault("GDPR_DISTINCT_APPROVER", getenv("GDPR_DISTINCT_APPROVER"), true); err != nil {
		problems = append(problems, err)
	}
	if c.PurgeInterval, err = parseInterval("MAILLEDGER_PURGE_INTERVAL", getenv("MAILLEDGER_PURGE_INTERVAL"), DefaultPurgeInterval); err != nil {
		problems = append(problems, err)
	}
	return problems
}

// setDefaults fills every unset value with its default.
func (c *Config) setDefaults() {
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = "sqlite://" + filepath.Join(c.DataDir, "mailledger.db")
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = DefaultHTTPAddr
	}
	if c.LedgerOrigin == "" {
		c.LedgerOrigin = DefaultLedgerOrigin
	}
	if c.CheckpointEvery == 0 {
		c.CheckpointEvery = DefaultCheckpointEvery
	}
	if c.CheckpointInterval == 0 {
		c.CheckpointInterval = DefaultCheckpointInterval
	}
	if c.RetentionDays == 0 {
		c.RetentionDays = DefaultRetentionDays
	}
	c.setSpamDefaults()
}

// Validate checks the configuration and joins every problem it finds.
func (c Config) Validate() error { return errors.Join(c.validateService(), c.Exports.Validate()) }

// validateService checks everything but the exports.
func (c Config) validateService() error {
	var problems []error
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.DataDir == "" {
		bad("MAILLEDGER_DATA_DIR is empty")
	}
	if c.DatabaseURL == "" {
		bad("DATABASE_URL is empty")
	}
	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		bad("HTTP_ADDR %q is not host:port", c.HTTPAddr)
	}
	if c.LedgerOrigin == "" || strings.ContainsAny(c.LedgerOrigin, "+ \t\r\n") {
		bad("MAILLEDGER_LEDGER_ORIGIN %q must be one word without '+' or spaces", c.LedgerOrigin)
	}
	if c.CheckpointEvery < 1 {
		bad("MAILLEDGER_CHECKPOINT_EVERY must be at least 1, got %d", c.CheckpointEvery)
	}
	if c.CheckpointInterval < time.Second {
		bad("MAILLEDGER_CHECKPOINT_INTERVAL must be at least 1s, got %s", c.CheckpointInterval)
	}
	if c.RetentionDays < 1 || c.RetentionDays > maxRetentionDays {
		bad("MAILLEDGER_RETENTION_DAYS must be between 1 and %d, got %d", maxRetentionDays, c.RetentionDays)
	}
	c.validateSpam(bad)
	return errors.Join(append(problems, c.validateErasure())...)
}

// validateErasure checks PDFSERVICE_URL and MAILLEDGER_PURGE_INTERVAL.
func (c Config) validateErasure() error {
	var problems []error
	if c.PDFServiceURL != "" && !isServiceURL(c.PDFServiceURL) {
		problems = append(problems, fmt.Errorf("%w: PDFSERVICE_URL %q must be an http or https URL such as http://gotenberg:3000",
			ErrConfig, redactURL(c.PDFServiceURL)))
	}
	if c.PurgeInterval != 0 && c.PurgeInterval < time.Second {
		problems = append(problems, fmt.Errorf("%w: MAILLEDGER_PURGE_INTERVAL must be 0 (no schedule) or at least 1s, got %s",
			ErrConfig, c.PurgeInterval))
	}
	return errors.Join(problems...)
}

// LogValue shows the configuration without secrets: the database URL's password is
// masked and the bootstrap admin's password left out.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("data_dir", c.DataDir),
		slog.String("database", database.Redact(c.DatabaseURL)),
		slog.String("http_addr", c.HTTPAddr),
		slog.Any("bootstrap_admin", c.BootstrapAdmin),
		slog.Any("bootstrap_auditor", c.BootstrapAuditor),
		slog.Bool("multitenancy", c.Multitenancy),
		slog.Int64("retention_days", c.RetentionDays),
		slog.String("spam", c.spamString()),
		slog.String("ledger_key_file", c.LedgerKeyFile),
		slog.String("ledger_origin", c.LedgerOrigin),
		slog.Int64("checkpoint_every", c.CheckpointEvery),
		slog.String("checkpoint_interval", c.CheckpointInterval.String()),
		slog.String("log_level", c.LogLevel.String()),
		slog.Bool("gdpr_distinct_approver", c.DistinctApprover),
		slog.String("pdfservice_url", redactURL(c.PDFServiceURL)),
		slog.String("purge_interval", c.PurgeInterval.String()),
		slog.Any("smarthost", c.Smarthost),
		slog.String("dir_export", c.Exports.Dir),
		slog.Int("ediscovery_max_global_exports", c.Exports.MaxGlobal),
		slog.Int("ediscovery_max_tenant_exports", c.Exports.MaxTenant),
		slog.Int("ediscovery_workers", c.Exports.Workers),
	)
}

// KeyDir is the directory of the keys created on first start: the ledger's signing key
// and the archive's encryption keys.
func (c Config) KeyDir() string { return filepath.Join(c.DataDir, "keys") }

// CertificateDir is where serve keeps a copy of every completed erasure's certificate
// bundle (CertificateKeeper), outside the database.
func (c Config) CertificateDir() string { return filepath.Join(c.DataDir, "certificates") }

// StoreDir is the root of the local message store.
func (c Config) StoreDir() string { return filepath.Join(c.DataDir, "store") }

// Retention is RetentionDays as a duration.
func (c Config) Retention() time.Duration { return time.Duration(c.RetentionDays) * 24 * time.Hour }

// maxRetentionDays keeps the retention date within what every database stores (100 years).
const maxRetentionDays = 36500

func parseCredentials(name, v string) (Credentials, error) {
	if v == "" {
		return Credentials{}, nil
	}
	user, pass, ok := strings.Cut(v, ":")
	if !ok || user == "" || pass == "" {
		// The value may hold a password: the message names the variable only.
		return Credentials{}, fmt.Errorf("%w: %s must be user:password with both parts non-empty", ErrConfig, name)
	}
	return Credentials{Username: user, Password: pass}, nil
}

func parseSwitch(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "off", "no":
		return false, nil
	case "1", "true", "on", "yes":
		return true, nil
	}
	return false, fmt.Errorf("%w: %s must be 0 or 1, got %q", ErrConfig, name, v)
}

// parseSwitchDefault is parseSwitch with def for an unset variable.
func parseSwitchDefault(name, v string, def bool) (bool, error) {
	if strings.TrimSpace(v) == "" {
		return def, nil
	}
	return parseSwitch(name, v)
}

// parseInterval reads a duration that may be 0 (off); def when unset.
func parseInterval(name, v string, def time.Duration) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return def, nil
	}
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: %s must be 0 or a duration such as 1h, got %q", ErrConfig, name, v)
	}
	return d, nil
}

// isServiceURL accepts an absolute http or https URL with a host.
func isServiceURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// redactURL masks the password of a URL's user information, for logs and errors; a URL
// that does not parse is not shown at all, since it may hold a password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

func parseInt(name, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: %s must be a positive integer, got %q", ErrConfig, name, v)
	}
	return n, nil
}

func parseDuration(name, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: %s must be a positive duration such as 60s, got %q", ErrConfig, name, v)
	}
	return d, nil
}

func parseLevel(v string) (slog.Level, error) {
	if v == "" {
		return slog.LevelInfo, nil
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		return slog.LevelInfo, fmt.Errorf("%w: LOG_LEVEL must be debug, info, warn or error, got %q", ErrConfig, v)
	}
	return l, nil
}
