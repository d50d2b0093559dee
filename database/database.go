// Package database opens the one SQL database a deployment uses (SQLite, PostgreSQL or
// MySQL/MariaDB) from a DATABASE_URL and hides the few differences between the dialects
// that the rest of the code meets: placeholders, transaction options and time values.
package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// Dialect names one of the three supported SQL dialects.
type Dialect string

// The supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
	MySQL    Dialect = "mysql"
)

// ErrBadURL is returned for a DATABASE_URL that cannot be understood.
var ErrBadURL = errors.New("malformed database url")

// DB is an open database together with its dialect.
type DB struct {
	*sql.DB
	Dialect Dialect
	// writeMu serialises writers inside one process on SQLite, whose single writer
	// lock would otherwise be fought over with busy-waiting.
	writeMu *sync.Mutex
	// writer is SQLite's pool of one connection for InTx (nil on the servers): the
	// writers queue on writeMu anyway, and one connection keeps the large page cache
	// that writes want, while the readers' pool keeps small ones (sqliteWriterCacheKiB, sqliteReaderCacheKiB).
	writer *sql.DB
	stmts  *stmtCache
}

// Open parses rawURL (sqlite://PATH, postgres://…, mysql://user:pass@tcp(host:port)/db)
// and opens a connection pool. It does not contact the server; call Ping for that.
func Open(rawURL string) (*DB, error) {
	dialect, driver, dsn, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if dialect == SQLite {
		if err := createSQLiteFile(sqlitePath(rawURL)); err != nil {
			return nil, err
		}
	}
	sqlDB, err := openPool(dialect, driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
	}
	db := &DB{DB: sqlDB, Dialect: dialect, writeMu: &sync.Mutex{}, stmts: &stmtCache{}}
	if dialect == SQLite {
		if db.writer, err = sql.Open(driver, sqliteConnDSN(sqlitePath(rawURL), sqliteWriterCacheKiB)); err != nil {
			_ = sqlDB.Close()
			return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
		}
	}
	db.tunePool()
	return db, nil
}

// SQLite's page caches, per connection, in KiB, and the readers' pool. A writer touches
// index pages at random places (address_role by address and date key, FTS5 segments):
// importing 100,000 randomly dated messages ran at 337 msg/s with SQLite's default 2 MiB
// cache, 422 with 32 and 467 with 64 (docs/performance.md, "SQLite, 500,000 messages,
// with the date key"). A reader's cache is emptied whenever another connection has
// written, and the operating system caches the file for all of them. The allocator under
// SQLite (modernc.org/memory) gives a page of 4 KiB and its header an 8 KiB slot, so a
// cache takes about 1.75 times its size: 115 MB for 64 MiB (docs/performance.md,
// "SQLite's page caches").
//
// Every connection also maps the first sqliteMmapBytes of the database file into memory
// (SQLite's memory-mapped I/O; SQLite caps it at its SQLITE_MAX_MMAP_SIZE, 2 GB less 64
// KiB in this build): a page read there is a memory access where it was a read call and a
// copy into the connection's cache, which a reader's cache, emptied by every write, needs
// again and again. The mapped pages are the kernel's page cache, shared by every
// connection and given back under memory pressure; SQLite writes through write calls as
// before (docs/performance.md, "SQLite: the database file mapped into memory").
const (
	sqliteMmapBytes      = 2 << 30
	sqliteWriterCacheKiB = 65536
	sqliteReaderCacheKiB = 8192
)

// sqliteReaders is the size of SQLite's readers' pool: two connections a processor, at
// least 4. Past the 2 GB the map covers, every page a reader takes goes through one page
// cache behind one mutex for all connections (this build of SQLite manages its memory
// globally), and more readers than that only wait on it: at a million messages, 8
// clients, on 2 processors, a common word's page at offset 5,000 took 346 to 608 ms p99
// with 8 readers and 262 to 424 with 4, its median 210 to 240 ms either way; the searches
// wait for a connection instead (docs/performance.md, "SQLite: fewer readers").
func sqliteReaders() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

func (db *DB) tunePool() {
	switch db.Dialect {
	case SQLite:
		db.SetMaxOpenConns(sqliteReaders())
		db.SetMaxIdleConns(sqliteReaders())
		db.writer.SetMaxOpenConns(1)
		db.writer.SetMaxIdleConns(1)
	default:
		db.SetMaxOpenConns(32)
		db.SetMaxIdleConns(16)
		db.SetConnMaxIdleTime(5 * time.Minute)
	}
}

// createSQLiteFile creates the database's folder (0700) and an empty database file (0600)
// unless they exist. SQLite gives its -wal, -shm and -journal files the mode of the
// database file, so they are 0600 too; left to SQLite, all of them would be 0644 (the
// umask's default), readable by every local user.
func createSQLiteFile(path string) error {
	if path == ":memory:" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	return f.Close()
}

// SQLiteFiles returns the paths of the files an SQLite database of rawURL may have (the
// database, its -wal, -shm and -journal), and nil for a URL of another dialect.
func SQLiteFiles(rawURL string) []string {
	if d, _, _, err := parseURL(rawURL); err != nil || d != SQLite {
		return nil
	}
	p := sqlitePath(rawURL)
	return []string{p, p + "-wal", p + "-shm", p + "-journal"}
}

func sqlitePath(rawURL string) string {
	p := strings.TrimPrefix(rawURL, "sqlite://")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p
}

func parseURL(rawURL string) (Dialect, string, string, error) {
	scheme, _, ok := strings.Cut(rawURL, "://")
	if !ok {
		return "", "", "", fmt.Errorf("%w: no scheme (want sqlite://, postgres:// or mysql://)", ErrBadURL)
	}
	switch scheme {
	case "sqlite", "sqlite3", "file":
		return sqliteDSN(rawURL)
	case "postgres", "postgresql":
		if _, err := url.Parse(rawURL); err != nil {
			// url.Error repeats the whole URL, password included: say only what is wrong.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return "", "", "", fmt.Errorf("%w: %w", ErrBadURL, err)
		}
		return Postgres, "pgx", rawURL, nil
	case "mysql", "mariadb":
		return mysqlDSN(strings.TrimPrefix(rawURL, scheme+"://"))
	}
	return "", "", "", fmt.Errorf("%w: unknown scheme %q (want sqlite, postgres or mysql)", ErrBadURL, scheme)
}

func sqliteDSN(rawURL string) (Dialect, string, string, error) {
	path := sqlitePath(rawURL)
	if path == "" {
		return "", "", "", fmt.Errorf("%w: sqlite url has no path", ErrBadURL)
	}
	return SQLite, "sqlite", sqliteConnDSN(path, sqliteReaderCacheKiB), nil
}

// sqliteConnDSN is the driver's DSN for the database file at path, its connections with a
// page cache of cacheKiB.
func sqliteConnDSN(path string, cacheKiB int) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(20000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", cacheKiB))
	q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", sqliteMmapBytes))
	q.Set("_txlock", "immediate")
	q.Set("_time_format", "sqlite")
	return "file:" + path + "?" + q.Encode()
}

func mysqlDSN(dsn string) (Dialect, string, string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", "", "", fmt.Errorf("%w: %w", ErrBadURL, err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	// ANSI_QUOTES lets the same "from" and "to" column quoting work on all three dialects.
	cfg.Params["sql_mode"] = "'ANSI_QUOTES,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"
	cfg.Params["charset"] = "utf8mb4"
	cfg.Collation = "utf8mb4_bin"
	cfg.InterpolateParams = true
	// Several statements in one round trip (the ledger's append writes); arguments are
	// always bound through placeholders.
	cfg.MultiStatements = true
	// RowsAffected counts matched rows, as on PostgreSQL and SQLite, not changed ones.
	cfg.ClientFoundRows = true
	return MySQL, "mysql", cfg.FormatDSN(), nil
}

// redact hides a password in a URL so that it can be shown in an error.
func redact(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	if at := strings.LastIndexByte(rawURL, '@'); at > 0 {
		return "…" + rawURL[at:]
	}
	return rawURL
}

// Redact returns rawURL with any password replaced, for logs.
func Redact(rawURL string) string { return redact(rawURL) }

// Rebind turns the ?-placeholders of query into the dialect's own ($1, $2… on PostgreSQL).
func (db *DB) Rebind(query string) string { return Rebind(db.Dialect, query) }

// Rebind turns the ?-placeholders of query into dialect d's own.
func Rebind(d Dialect, query string) string {
	if d != Postgres || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// Tx is a transaction that knows its dialect.
type Tx struct {
	*sql.Tx
	Dialect Dialect
}

// Exec runs query with ?-placeholders rebound for the dialect.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.Tx.ExecContext(ctx, Rebind(tx.Dialect, query), args...)
}

// Query runs query with ?-placeholders rebound for the dialect.
func (tx *Tx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.Tx.QueryContext(ctx, Rebind(tx.Dialect, query), args...)
}

// QueryRow runs query with ?-placeholders rebound for the dialect.
func (tx *Tx) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return tx.Tx.QueryRowContext(ctx, Rebind(tx.Dialect, query), args...)
}

// InsertID runs an INSERT of one row into a table whose key is an auto-increment id
// column and returns the new id: RETURNING id on PostgreSQL (whose driver has no
// LastInsertId), the driver's last insert id elsewhere.
func (tx *Tx) InsertID(ctx context.Context, insert string, args ...any) (int64, error) {
	if tx.Dialect == Postgres {
		var id int64
		err := tx.QueryRow(ctx, insert+` RETURNING id`, args...).Scan(&id)
		return id, err
	}
	res, err := tx.Exec(ctx, insert, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// InTx runs fn in a write transaction and commits it when fn returns nil. On SQLite the
// process's writers queue on a mutex before taking the database's writer lock.
func (db *DB) InTx(ctx context.Context, fn func(*Tx) error) error {
	if db.Dialect == SQLite {
		db.writeMu.Lock()
		defer db.writeMu.Unlock()
	}
	var opts *sql.TxOptions
	if db.Dialect == Postgres {
		opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	pool := db.DB
	if db.writer != nil {
		pool = db.writer
	}
	sqlTx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	tx := &Tx{Tx: sqlTx, Dialect: db.Dialect}
	if err := fn(tx); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	return sqlTx.Commit()
}

// ForUpdate is the row-lock suffix of a SELECT in this dialect ("" on SQLite, whose
// IMMEDIATE transactions already hold the single writer lock).
func ForUpdate(d Dialect) string {
	if d == SQLite {
		return ""
	}
	return " FOR UPDATE"
}

// TimeValue converts a timestamp read from any of the drivers into a UTC time.
func TimeValue(v any) (time.Time, error) {
	switch t := v.(type) {
	case time.Time:
		return t.UTC(), nil
	case string:
		return parseTimeText(t)
	case []byte:
		return parseTimeText(string(t))
	case nil:
		return time.Time{}, errors.New("null timestamp")
	}
	return time.Time{}, fmt.Errorf("unexpected timestamp type %T", v)
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
}

func parseTimeText(s string) (time.Time, error) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unparseable timestamp %q", s)
}

// TimeArg converts t into the value a statement of dialect d stores for a timestamp
// column: time.Time for the servers, fixed-width RFC 3339 text with microseconds on SQLite
// (so that text order is time order).
func TimeArg(d Dialect, t time.Time) any {
	t = t.UTC().Truncate(time.Microsecond)
	if d == SQLite {
		return t.Format("2006-01-02T15:04:05.000000Z")
	}
	return t
}

// openPool opens the connection pool; MySQL connections are set to READ COMMITTED once
// when they connect (portable across MySQL and MariaDB, and one round trip less per
// transaction than asking for the level at every BEGIN).
func openPool(dialect Dialect, driverName, dsn string) (*sql.DB, error) {
	if dialect != MySQL {
		return sql.Open(driverName, dsn)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(readCommitted{connector}), nil
}

type readCommitted struct{ driver.Connector }

func (c readCommitted) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	execer, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("mysql connection cannot execute statements")
	}
	if _, err := execer.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", nil); err != nil {
		conn.Close()
		return nil, fmt.Errorf("set isolation level: %w", err)
	}
	return conn, nil
}
