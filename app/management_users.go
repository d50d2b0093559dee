package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/management"
	"github.com/mailledger/mailledger/identity"
)

// UserInput is an element of add_user, update_user and delete_user. On update an absent
// field is left as it is, and so is an empty password.
type UserInput struct {
	UID            Number  `json:"uid"`
	Username       *string `json:"username"`
	Realname       *string `json:"realname"`
	Email          *string `json:"email"`
	Domain         *string `json:"domain"`
	Password       *string `json:"password"`
	IsAdmin        Number  `json:"isadmin"`
	Group          *string `json:"group"`
	DN             *string `json:"dn"`
	SAMAccountName *string `json:"samaccountname"`
}

// validate checks element i; add requires a username, a domain and a password hash.
func (in *UserInput) validate(v *domain.ValidationError, i int, add bool) {
	if add || in.Username != nil {
		if n := len(deref(in.Username)); n == 0 || n > 255 {
			v.Add(fieldOf(i, "username"), "must be 1 to 255 characters")
		}
	}
	if in.Email != nil && *in.Email != "" {
		a, ok := address(*in.Email)
		if !ok {
			v.Add(fieldOf(i, "email"), "must be an email address")
		}
		in.Email = &a
	}
	if add || in.Domain != nil {
		d, ok := domainName(deref(in.Domain))
		if !ok {
			v.Add(fieldOf(i, "domain"), `must be a domain name or "local"`)
		}
		in.Domain = &d
	}
	if (add || deref(in.Password) != "") && !identity.ValidHash(deref(in.Password)) {
		v.Add(fieldOf(i, "password"), "must be a bcrypt or argon2id password hash")
	}
	in.IsAdmin.check(v, i, "isadmin", 0, 2)
	if !add {
		in.UID.check(v, i, "uid", 1, 1<<62)
		if !in.UID.Set {
			v.Add(fieldOf(i, "uid"), "is required")
		}
	}
}

// AddUsers adds the users of in; a customer administrator only in their customer's
// domains (another domain is ErrNotFound).
func (m *Management) AddUsers(ctx context.Context, c Caller, in []UserInput) (int, error) {
	if err := requireAdmin(c); err != nil {
		return 0, err
	}
	if err := validateAll(in, true); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for _, u := range in {
			tenant, err := m.domainTenantTx(ctx, ch, c, *u.Domain)
			if err != nil {
				return err
			}
			user := identity.User{Username: *u.Username, Realname: deref(u.Realname), Email: deref(u.Email), Domain: *u.Domain,
				PasswordHash: *u.Password, Role: identity.Role(u.IsAdmin.Value), DN: deref(u.DN), SAMAccountName: deref(u.SAMAccountName)}
			if err := addUserTx(ctx, ch, tenant, user); err != nil {
				return err
			}
		}
		return nil
	})
}

// addUserTx inserts u and records its event in tenant.
func addUserTx(ctx context.Context, ch *changes, tenant string, u identity.User) error {
	uid, err := identity.AddTx(ctx, ch.tx.Tx, u)
	if errors.Is(err, identity.ErrUserExists) {
		return fmt.Errorf("%w: user %s", ErrExists, u.Username)
	}
	if err != nil {
		return err
	}
	u.UID = uid
	return ch.record(ctx, tenant, management.NewChange(management.UserAdded, "user", itoa(uid), nil, userFields(u), true))
}

// userFields is a user as an event's before or after: never the password hash.
func userFields(u identity.User) map[string]any {
	return map[string]any{"uid": u.UID, "username": u.Username, "realname": u.Realname, "email": u.Email, "domain": u.Domain,
		"isadmin": int(u.Role), "group": u.Group, "dn": u.DN, "samaccountname": u.SAMAccountName}
}

// domainTenantTx returns the tenant of users of domain d, checking that the caller
// administers it: a customer administrator only their customer's domain and the domains
// mapped to it.
func (m *Management) domainTenantTx(ctx context.Context, ch *changes, c Caller, d string) (string, error) {
	var customerID string
	err := ch.tx.QueryRow(ctx, `SELECT customer_id FROM customers WHERE domain = ? OR domain = (SELECT mapped FROM domains WHERE domain = ?)`, d, d).Scan(&customerID)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("read customer of domain: %w", err)
	}
	if !c.Scope.IsGlobalAdmin() && (customerID == "" || customerID != c.Scope.Customer.CustomerID) {
		return "", fmt.Errorf("%w: domain %s", ErrNotFound, d)
	}
	switch {
	case customerID != "":
		return m.tenancy.tenantOf(customerID), nil
	case d == identity.LocalDomain:
		return DefaultTenant, nil
	}
	return TenantOf(m.cfg.Multitenancy, d), nil
}

// elementInput is an element of a management write array that checks itself: its
// problems go to v under "<i>.<field>"; add says whether it is added or updated.
type elementInput[T any] interface {
	*T
	validate(v *domain.ValidationError, i int, add bool)
}

// validateAll checks every element of in and reports every problem at once.
func validateAll[T any, P elementInput[T]](in []T, add bool) error {
	v := &domain.ValidationError{}
	for i := range in {
		P(&in[i]).validate(v, i, add)
	}
	return v.Err()
}
