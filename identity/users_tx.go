package identity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mailledger/mailledger/database"
)

// userColumns are the columns every read of a user scans, in scanUser's order.
const userColumns = `uid, username, realname, email, domain, password, isadmin, dn, samaccountname, groupname`

// The transactional user writes of the management API (app), which applies a whole
// array of changes and its ledger events in one transaction. They take a hash, never a
// password: the caller checks it with ValidHash.

// AddTx inserts u in tx and returns its uid; a taken username is ErrUserExists.
func AddTx(ctx context.Context, tx *database.Tx, u User) (int64, error) {
	if u.Username == "" || u.PasswordHash == "" {
		return 0, fmt.Errorf("%w: username and password are required", ErrBadInput)
	}
	_, err := tx.Exec(ctx, `INSERT INTO users (username, realname, email, domain, password, isadmin, dn, samaccountname, groupname, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.Username, u.Realname, strings.ToLower(u.Email), strings.ToLower(u.Domain), u.PasswordHash, int(u.Role), u.DN, u.SAMAccountName, u.Group,
		database.TimeArg(tx.Dialect, time.Now()))
	if database.IsUniqueViolation(err) {
		return 0, fmt.Errorf("%w: %s", ErrUserExists, u.Username)
	}
	if err != nil {
		return 0, fmt.Errorf("add user: %w", err)
	}
	var id int64
	if err := tx.QueryRow(ctx, `SELECT uid FROM users WHERE username = ?`, u.Username).Scan(&id); err != nil {
		return 0, fmt.Errorf("add user: %w", err)
	}
	return id, nil
}

// ByUIDTx reads user uid in tx, locking the row; a missing one is ErrNoUser.
func ByUIDTx(ctx context.Context, tx *database.Tx, uid int64) (*User, error) {
	var u User
	var role int
	err := tx.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE uid = ?`+database.ForUpdate(tx.Dialect), uid).
		Scan(&u.UID, &u.Username, &u.Realname, &u.Email, &u.Domain, &u.PasswordHash, &role, &u.DN, &u.SAMAccountName, &u.Group)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: uid %d", ErrNoUser, uid)
	}
	if err != nil {
		return nil, fmt.Errorf("read user: %w", err)
	}
	u.Role = Role(role)
	return &u, nil
}

// UpdateTx writes every field of u (by UID) in tx; a taken username is ErrUserExists.
func UpdateTx(ctx context.Context, tx *database.Tx, u User) error {
	_, err := tx.Exec(ctx, `UPDATE users SET username = ?, realname = ?, email = ?, domain = ?, password = ?, isadmin = ?, dn = ?, samaccountname = ?, groupname = ? WHERE uid = ?`,
		u.Username, u.Realname, strings.ToLower(u.Email), strings.ToLower(u.Domain), u.PasswordHash, int(u.Role), u.DN, u.SAMAccountName, u.Group, u.UID)
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("%w: %s", ErrUserExists, u.Username)
	}
	if err != nil {
		return fmt.Errorf("update user: %w", err)
	}
	return nil
}

// DeleteTx removes user uid in tx.
func DeleteTx(ctx context.Context, tx *database.Tx, uid int64) error {
	if _, err := tx.Exec(ctx, `DELETE FROM users WHERE uid = ?`, uid); err != nil {
		return fmt.Errorf("delete user: %w", err)
	}
	return nil
}

// CountInDomainTx counts the users of domain in tx.
func CountInDomainTx(ctx context.Context, tx *database.Tx, domain string) (int, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM users WHERE domain = ?`, domain).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}
