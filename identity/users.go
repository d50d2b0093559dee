// Package identity stores mailledger's users and checks their credentials. Passwords are
// kept as bcrypt hashes (golang.org/x/crypto/bcrypt: the well-kept, widely interoperable
// choice, and the one PHP's password_hash writes, so hashes imported from piler verify).
package identity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain/fault"
)

// Role is a user's isadmin value.
type Role int

// The roles of docs/api.md ("Authentication and roles").
const (
	RoleUser    Role = 0
	RoleAdmin   Role = 1
	RoleAuditor Role = 2
)

// String names the role as docs/api.md and `mailledger user add --role` do.
func (r Role) String() string {
	switch r {
	case RoleAdmin:
		return "admin"
	case RoleAuditor:
		return "auditor"
	}
	return "user"
}

// ParseRole reads "admin", "auditor" or "user".
func ParseRole(s string) (Role, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "admin":
		return RoleAdmin, nil
	case "auditor":
		return RoleAuditor, nil
	case "user":
		return RoleUser, nil
	}
	return 0, fmt.Errorf("unknown role %q (want admin, auditor or user)", s)
}

// LocalDomain is the domain of the service's own administrators (docs/api.md).
const LocalDomain = "local"

// User is one row of the users table. PasswordHash never leaves this package's callers
// in a response or a log line.
type User struct {
	UID            int64
	Username       string
	Realname       string
	Email          string
	Domain         string
	PasswordHash   string
	Role           Role
	DN             string
	SAMAccountName string
	// Group is the name of the user's group in their tenant ("" none).
	Group string
}

// disabledMark starts the password column of a disabled user, before the hash it keeps
// (the convention of /etc/shadow's locked accounts): no password matches it, and
// enabling the user again restores the old password.
const disabledMark = "!"

// Disabled reports whether the user may not log in.
func (u *User) Disabled() bool { return strings.HasPrefix(u.PasswordHash, disabledMark) }

// Errors of the user store.
var (
	ErrUserExists = fault.New(fault.Conflict, "user already exists")
	ErrNoUser     = fault.New(fault.NotFound, "no such user")
	ErrBadInput   = fault.New(fault.Invalid, "bad user input")
)

// Users is the users table.
type Users struct {
	db *database.DB
}

// NewUsers returns the user store on db.
func NewUsers(db *database.DB) *Users { return &Users{db: db} }

// HashPassword returns the bcrypt hash of password.
func HashPassword(password string) (string, error) {
	if password == "" {
		return "", fmt.Errorf("%w: empty password", ErrBadInput)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return string(h), nil
}

// Add inserts u, whose PasswordHash must already be set.
func (s *Users) Add(ctx context.Context, u User) (int64, error) {
	u.Username = strings.TrimSpace(u.Username)
	if u.Username == "" || len(u.Username) > 255 || u.PasswordHash == "" {
		return 0, fmt.Errorf("%w: username and password are required", ErrBadInput)
	}
	if u.Domain == "" {
		u.Domain = LocalDomain
	}
	var id int64
	// The unique key on username decides, so that two concurrent adds of one name give one
	// user and one ErrUserExists.
	err := s.db.InTx(ctx, func(tx *database.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO users (username, realname, email, domain, password, isadmin, dn, samaccountname, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			u.Username, u.Realname, strings.ToLower(u.Email), strings.ToLower(u.Domain), u.PasswordHash, int(u.Role), u.DN, u.SAMAccountName, database.TimeArg(tx.Dialect, time.Now()))
		if database.IsUniqueViolation(err) {
			return fmt.Errorf("%w: %s", ErrUserExists, u.Username)
		}
		if err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT uid FROM users WHERE username = ?`, u.Username).Scan(&id)
	})
	return id, err
}

// ByUsername returns the user named username.
func (s *Users) ByUsername(ctx context.Context, username string) (*User, error) {
	var u User
	var role int
	err := s.db.QueryRowContext(ctx, s.db.Rebind(`SELECT `+userColumns+` FROM users WHERE username = ?`), username).
		Scan(&u.UID, &u.Username, &u.Realname, &u.Email, &u.Domain, &u.PasswordHash, &role, &u.DN, &u.SAMAccountName, &u.Group)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrNoUser, username)
	}
	if err != nil {
		return nil, fmt.Errorf("read user: %w", err)
	}
	u.Role = Role(role)
	return &u, nil
}

// EnsureBootstrap creates username with password and role unless a user of that name
// exists; it reports whether it created one.
func (s *Users) EnsureBootstrap(ctx context.Context, username, password string, role Role) (bool, error) {
	if _, err := s.ByUsername(ctx, username); err == nil {
		return false, nil
	} else if !errors.Is(err, ErrNoUser) {
		return false, err
	}
	hash, err := HashPassword(password)
	if err != nil {
		return false, err
	}
	_, err = s.Add(ctx, User{Username: username, Realname: username, Domain: LocalDomain, PasswordHash: hash, Role: role})
	if errors.Is(err, ErrUserExists) { // another node created it first
		return false, nil
	}
	return err == nil, err
}

// SetRole changes the role of username; it takes effect at the user's next request.
func (s *Users) SetRole(ctx context.Context, username string, role Role) error {
	if _, err := s.ByUsername(ctx, username); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, s.db.Rebind(`UPDATE users SET isadmin = ? WHERE username = ?`), int(role), username); err != nil {
		return fmt.Errorf("update user: %w", err)
	}
	return nil
}

// SetDisabled disables or enables username. A disabled user's requests are 401 from the
// next one on; enabling restores the password they had.
func (s *Users) SetDisabled(ctx context.Context, username string, disabled bool) error {
	u, err := s.ByUsername(ctx, username)
	if err != nil || u.Disabled() == disabled {
		return err
	}
	hash := disabledMark + u.PasswordHash
	if !disabled {
		hash = strings.TrimPrefix(u.PasswordHash, disabledMark)
	}
	// Compare and set: a concurrent password change is not overwritten.
	if _, err := s.db.ExecContext(ctx, s.db.Rebind(`UPDATE users SET password = ? WHERE username = ? AND password = ?`),
		hash, username, u.PasswordHash); err != nil {
		return fmt.Errorf("update user: %w", err)
	}
	return nil
}
