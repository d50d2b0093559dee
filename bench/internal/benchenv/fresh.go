// Package benchenv is what the benchmark programs of bench/ share: fresh databases made
// for one run and dropped after it, and the facts about the machine a report states.
package benchenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/migrations"
)

// FreshDB is a new, migrated database made for one benchmark run, and how to drop it.
type FreshDB struct {
	*database.DB
	Version string // the server's (or SQLite library's) version string
	URL     string // the database's DATABASE_URL
	drop    func()
}

// Close closes the database and drops it, unless Keep was called.
func (f *FreshDB) Close() {
	f.DB.Close()
	f.drop()
}

// Keep makes Close leave the database in place (to look at it after a run).
func (f *FreshDB) Keep() { f.drop = func() {} }

// OpenFresh creates an empty database of dialect d (a file under dir for SQLite, a new
// database on the server named by adminURL otherwise), migrates it and returns it.
func OpenFresh(ctx context.Context, d database.Dialect, adminURL, dir string) (*FreshDB, error) {
	f, err := OpenEmpty(ctx, d, adminURL, dir)
	if err != nil {
		return nil, err
	}
	if err := migrations.Up(ctx, f.DB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenEmpty is OpenFresh without the schema: the database has no tables, for a benchmark
// that creates its own.
func OpenEmpty(ctx context.Context, d database.Dialect, adminURL, dir string) (*FreshDB, error) {
	rawURL, drop, err := createDatabase(ctx, d, adminURL, dir)
	if err != nil {
		return nil, err
	}
	db, err := database.Open(rawURL)
	if err != nil {
		drop()
		return nil, err
	}
	f := &FreshDB{DB: db, URL: rawURL, drop: drop}
	if f.Version, err = serverVersion(ctx, db); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func createDatabase(ctx context.Context, d database.Dialect, adminURL, dir string) (string, func(), error) {
	switch d {
	case database.SQLite:
		path, err := os.MkdirTemp(dir, "mlbench-")
		if err != nil {
			return "", nil, err
		}
		return "sqlite://" + filepath.Join(path, "bench.db"), func() { os.RemoveAll(path) }, nil
	case database.Postgres:
		return createServerDatabase(ctx, adminURL, postgresURLFor, " WITH (FORCE)", "")
	case database.MySQL:
		return createServerDatabase(ctx, adminURL, mysqlURLFor, "", " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
	}
	return "", nil, fmt.Errorf("unknown dialect %q", d)
}

// createServerDatabase runs CREATE DATABASE on the admin connection and returns the URL
// of the new database and a function that drops it.
func createServerDatabase(ctx context.Context, adminURL string, urlFor func(admin, name string) (string, error), dropSuffix, createSuffix string) (string, func(), error) {
	name := "mlbench_" + randomHex(6)
	rawURL, err := urlFor(adminURL, name)
	if err != nil {
		return "", nil, err
	}
	admin, err := database.Open(adminURL)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close()
	createCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(createCtx, "CREATE DATABASE "+name+createSuffix); err != nil {
		return "", nil, fmt.Errorf("create database on %s: %w", database.Redact(adminURL), err)
	}
	drop := func() {
		if a, err := database.Open(adminURL); err == nil {
			_, _ = a.Exec("DROP DATABASE IF EXISTS " + name + dropSuffix)
			a.Close()
		}
	}
	return rawURL, drop, nil
}

func postgresURLFor(admin, name string) (string, error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", fmt.Errorf("postgres url: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

func mysqlURLFor(admin, name string) (string, error) {
	scheme, rest, _ := strings.Cut(admin, "://")
	cfg, err := mysql.ParseDSN(rest)
	if err != nil {
		return "", fmt.Errorf("mysql url: %w", err)
	}
	cfg.DBName = name
	return scheme + "://" + cfg.FormatDSN(), nil
}

func serverVersion(ctx context.Context, db *database.DB) (string, error) {
	q := map[database.Dialect]string{
		database.SQLite:   "SELECT 'SQLite ' || sqlite_version()",
		database.Postgres: "SELECT version()",
		database.MySQL:    "SELECT CONCAT('MySQL/MariaDB ', VERSION())",
	}[db.Dialect]
	var v string
	if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return "", fmt.Errorf("server version: %w", err)
	}
	if short, _, ok := strings.Cut(v, " on "); ok {
		v = short
	}
	return v, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
