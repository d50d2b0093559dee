package database

import (
	"context"
	"database/sql"
	"sync"
)

// maxCachedStatements bounds the statement cache: it is meant for the few fixed query
// texts that run once per message (a read of one message, an export's read of one
// document), never for texts built from input, and a query past the bound simply runs
// unprepared.
const maxCachedStatements = 64

// stmtCache holds prepared statements by query text. database/sql prepares a cached
// statement once on each pooled connection that runs it and re-prepares it on a new one.
// What it saves: SQLite compiling the statement on every call (a tenth of a millisecond for
// a join, as much as reading a small message), MySQL's prepare and close round trips, and
// on PostgreSQL little (pgx already caches statements per connection).
type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// QueryCached runs query (with ?-placeholders, rebound here) as a prepared statement
// cached for the life of db. Use it only for fixed query texts.
func (db *DB) QueryCached(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	stmt, err := db.cached(ctx, query)
	if err != nil {
		return nil, err
	}
	if stmt == nil {
		return db.QueryContext(ctx, db.Rebind(query), args...)
	}
	return stmt.QueryContext(ctx, args...)
}

// cached returns the statement of query, preparing it on first use; nil once the cache
// is full.
func (db *DB) cached(ctx context.Context, query string) (*sql.Stmt, error) {
	c := db.stmts
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[query]; ok {
		return s, nil
	}
	if len(c.stmts) >= maxCachedStatements {
		return nil, nil
	}
	s, err := db.PrepareContext(ctx, db.Rebind(query))
	if err != nil {
		return nil, err
	}
	if c.stmts == nil {
		c.stmts = map[string]*sql.Stmt{}
	}
	c.stmts[query] = s
	return s, nil
}

// Close closes the cached statements, then the pools.
func (db *DB) Close() error {
	db.stmts.mu.Lock()
	for q, s := range db.stmts.stmts {
		_ = s.Close()
		delete(db.stmts.stmts, q)
	}
	db.stmts.mu.Unlock()
	if db.writer != nil {
		_ = db.writer.Close()
	}
	return db.DB.Close()
}
