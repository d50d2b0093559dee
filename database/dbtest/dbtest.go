// Package dbtest gives tests a fresh, migrated database of each dialect: a file in a
// temporary directory for SQLite, and a new database on the servers named by
// TEST_POSTGRES_URL and TEST_MYSQL_URL. Without those variables the server subtests skip
// with a loud SKIP line, except under CI=true, where they fail.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/migrations"
)

// Dialects lists the dialects every storage test runs on, in subtest order.
var Dialects = []database.Dialect{database.SQLite, database.Postgres, database.MySQL}

// Run runs fn as one subtest per dialect, named sqlite, postgres and mysql.
func Run(t *testing.T, fn func(t *testing.T, d database.Dialect)) {
	t.Helper()
	for _, d := range Dialects {
		t.Run(string(d), func(t *testing.T) { fn(t, d) })
	}
}

// Open returns a fresh migrated database of dialect d, closed and dropped after the test.
func Open(t testing.TB, d database.Dialect) *database.DB {
	t.Helper()
	db := OpenUnmigrated(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := migrations.Up(ctx, db); err != nil {
		t.Fatalf("migrate %s: %v", d, err)
	}
	return db
}

// OpenUnmigrated is Open without the schema.
func OpenUnmigrated(t testing.TB, d database.Dialect) *database.DB {
	t.Helper()
	db, err := database.Open(URL(t, d))
	if err != nil {
		t.Fatalf("open %s: %v", d, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// URL creates a fresh empty database of dialect d and returns its DATABASE_URL; the
// database is dropped after the test.
func URL(t testing.TB, d database.Dialect) string {
	t.Helper()
	switch d {
	case database.SQLite:
		return "sqlite://" + filepath.Join(t.TempDir(), "mailledger.db")
	case database.Postgres:
		return postgresURL(t, serverURL(t, "TEST_POSTGRES_URL"))
	case database.MySQL:
		return mysqlURL(t, serverURL(t, "TEST_MYSQL_URL"))
	}
	t.Fatalf("unknown dialect %q", d)
	return ""
}

// serverURL returns the variable's value, or skips the test loudly (fails under CI=true).
func serverURL(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v != "" {
		return v
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set, and CI=true forbids skipping the server tests", name)
	}
	fmt.Fprintf(os.Stderr, "SKIP: %s: %s is not set; this test needs a database server\n", t.Name(), name)
	t.Skipf("SKIP: %s is not set", name)
	return ""
}

func uniqueName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "mlt_" + hex.EncodeToString(b[:])
}

func postgresURL(t testing.TB, admin string) string {
	t.Helper()
	name := uniqueName()
	adminDB := mustOpen(t, admin)
	defer adminDB.Close()
	exec(t, adminDB, "CREATE DATABASE "+name)
	t.Cleanup(func() {
		db, err := database.Open(admin)
		if err == nil {
			_, _ = db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
			db.Close()
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("TEST_POSTGRES_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

func mysqlURL(t testing.TB, admin string) string {
	t.Helper()
	name := uniqueName()
	adminDB := mustOpen(t, admin)
	defer adminDB.Close()
	exec(t, adminDB, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
	t.Cleanup(func() {
		db, err := database.Open(admin)
		if err == nil {
			_, _ = db.Exec("DROP DATABASE IF EXISTS " + name)
			db.Close()
		}
	})
	scheme, rest, _ := strings.Cut(admin, "://")
	cfg, err := mysql.ParseDSN(rest)
	if err != nil {
		t.Fatalf("TEST_MYSQL_URL: %v", err)
	}
	cfg.DBName = name
	return scheme + "://" + cfg.FormatDSN()
}

func mustOpen(t testing.TB, rawURL string) *database.DB {
	t.Helper()
	db, err := database.Open(rawURL)
	if err != nil {
		t.Fatalf("open %s: %v", database.Redact(rawURL), err)
	}
	return db
}

func exec(t testing.TB, db *database.DB, q string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// Column runs query (written with ? placeholders, rebound for db's dialect) and returns its
// one column, scanned into T, in the order the rows came.
func Column[T any](t testing.TB, db *database.DB, query string, args ...any) []T {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), db.Rebind(query), args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}
