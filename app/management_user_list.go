package app

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/mailledger/mailledger/identity"
)

// UserView is a user as the web console's administration shows it: never the password
// hash, only whether the user is disabled.
type UserView struct {
	UID            int64
	Username       string
	Realname       string
	Email          string
	Domain         string
	Role           identity.Role
	Group          string
	DN             string
	SAMAccountName string
	Disabled       bool
}

// Admits reports whether c may use the management calls at all (global and customer
// administrators); ErrForbidden otherwise.
func (m *Management) Admits(c Caller) error { return requireAdmin(c) }

// AdmitsService reports whether c may manage the service itself (domains, adding and
// deleting customers): global administrators only; ErrForbidden otherwise.
func (m *Management) AdmitsService(c Caller) error { return requireGlobal(c) }

// userListColumns are the columns of a UserView, in scanUserView's order.
const userListColumns = `uid, username, realname, email, domain, password, isadmin, dn, samaccountname, groupname`

// Users lists the users c administers, by user name: every user for a global
// administrator; for a customer administrator, those of their customer's domain and of
// the domains mapped to it (as add_user and update_user admit them).
func (m *Management) Users(ctx context.Context, c Caller) ([]UserView, error) {
	if err := requireAdmin(c); err != nil {
		return nil, err
	}
	where, args := usersInScope(c)
	return queryRows(ctx, m.store.DB(), "users", scanUserView, `SELECT `+userListColumns+` FROM users`+where+` ORDER BY username`, args...)
}

// User returns user uid if c administers it; any other is ErrNotFound.
func (m *Management) User(ctx context.Context, c Caller, uid int64) (*UserView, error) {
	if err := requireAdmin(c); err != nil {
		return nil, err
	}
	where, args := usersInScope(c)
	if where == "" {
		where = " WHERE uid = ?"
	} else {
		where += " AND uid = ?"
	}
	list, err := queryRows(ctx, m.store.DB(), "user", scanUserView, `SELECT `+userListColumns+` FROM users`+where, append(args, uid)...)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%w: user %d", ErrNotFound, uid)
	}
	return &list[0], nil
}

// usersInScope is the WHERE clause of the users c administers ("" for all).
func usersInScope(c Caller) (string, []any) {
	if c.Scope.IsGlobalAdmin() {
		return "", nil
	}
	d := c.Scope.Customer.Domain
	return ` WHERE (domain = ? OR domain IN (SELECT domain FROM domains WHERE mapped = ?))`, []any{d, d}
}

func scanUserView(rows *sql.Rows) (UserView, error) {
	var u identity.User
	var role int
	if err := rows.Scan(&u.UID, &u.Username, &u.Realname, &u.Email, &u.Domain, &u.PasswordHash, &role, &u.DN, &u.SAMAccountName, &u.Group); err != nil {
		return UserView{}, fmt.Errorf("scan user: %w", err)
	}
	return UserView{UID: u.UID, Username: u.Username, Realname: u.Realname, Email: u.Email, Domain: u.Domain,
		Role: identity.Role(role), Group: u.Group, DN: u.DN, SAMAccountName: u.SAMAccountName, Disabled: u.Disabled()}, nil
}
