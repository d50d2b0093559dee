package benchenv

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/mailledger/mailledger/database"
)

// Default server URLs: the local servers of the development machine.
const (
	DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	DefaultMySQLURL    = "mysql://root@tcp(127.0.0.1:3306)/test"
)

// EnvOr returns the environment variable name, or fallback when it is unset or empty.
func EnvOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// ServerURLs returns the admin URLs of the two servers: TEST_POSTGRES_URL and
// TEST_MYSQL_URL, or the local servers.
func ServerURLs() map[database.Dialect]string {
	return map[database.Dialect]string{
		database.Postgres: EnvOr("TEST_POSTGRES_URL", DefaultPostgresURL),
		database.MySQL:    EnvOr("TEST_MYSQL_URL", DefaultMySQLURL),
	}
}

// ParseDialects checks a comma-separated list of dialect names.
func ParseDialects(list string) ([]database.Dialect, error) {
	var out []database.Dialect
	for _, d := range strings.Split(list, ",") {
		switch database.Dialect(d) {
		case database.SQLite, database.Postgres, database.MySQL:
			out = append(out, database.Dialect(d))
		default:
			return nil, fmt.Errorf("unknown dialect %q", d)
		}
	}
	return out, nil
}

// Durability reports the commit-durability setting the figures depend on.
func Durability(ctx context.Context, db *database.DB) string {
	q := map[database.Dialect]string{
		database.SQLite:   "PRAGMA synchronous",
		database.Postgres: "SHOW synchronous_commit",
		database.MySQL:    "SELECT @@innodb_flush_log_at_trx_commit",
	}[db.Dialect]
	var v string
	if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	switch db.Dialect {
	case database.SQLite:
		return "journal_mode=WAL, synchronous=" + map[string]string{"0": "OFF", "1": "NORMAL", "2": "FULL", "3": "EXTRA"}[v]
	case database.Postgres:
		return "synchronous_commit=" + v
	}
	return "innodb_flush_log_at_trx_commit=" + v
}

// Machine is the one-line description of the machine a report starts with.
func Machine() string {
	return fmt.Sprintf("%s, %d cores (runtime.NumCPU), %s %s/%s, load average %s",
		CPUModel(), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, LoadAverage())
}

// LoadAverage is the 1, 5 and 15 minute load of /proc/loadavg, or "n/a".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// CPUModel is the first "model name" of /proc/cpuinfo, or "unknown cpu".
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown cpu"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown cpu"
}

// Met is how a report says whether a goal was met.
func Met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}
