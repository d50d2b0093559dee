package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mailledger/mailledger/database"
)

// Config is the service's configuration, read from the environment (docs/contract.md §1).
// Read it with ConfigFromEnv, which applies the defaults and validates it.
type Config struct {
	// DataDir is MAILLEDGER_DATA_DIR, the root of local state (database, keys, files).
	DataDir string
	// DatabaseURL is DATABASE_URL. It may hold a password: log it only through
	// database.Redact.
	DatabaseURL string
	// HTTPAddr is HTTP_ADDR, the API's listen address.
	HTTPAddr string
	// BootstrapAdmin is MAILLEDGER_BOOTSTRAP_ADMIN ("user:password"); zero when unset.
	BootstrapAdmin Credentials
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

// Configuration defaults (docs/contract.md §1).
const (
	DefaultDataDir            = "./data"
	DefaultHTTPAddr           = "127.0.0.1:8080"
	DefaultLedgerOrigin       = "mailledger"
	DefaultCheckpointEvery    = 1000
	DefaultCheckpointInterval = 60 * time.Second
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
	}
	var err error
	if c.BootstrapAdmin, err = parseCredentials("MAILLEDGER_BOOTSTRAP_ADMIN", getenv("MAILLEDGER_BOOTSTRAP_ADMIN")); err != nil {
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
	problems = append(problems, c.Validate())
	return c, errors.Join(problems...)
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
}

// Validate checks the configuration and joins every problem it finds.
func (c Config) Validate() error {
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
		slog.String("ledger_key_file", c.LedgerKeyFile),
		slog.String("ledger_origin", c.LedgerOrigin),
		slog.Int64("checkpoint_every", c.CheckpointEvery),
		slog.String("checkpoint_interval", c.CheckpointInterval.String()),
		slog.String("log_level", c.LogLevel.String()),
	)
}

// KeyDir is the directory of the ledger key created on first start.
func (c Config) KeyDir() string { return filepath.Join(c.DataDir, "keys") }

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
