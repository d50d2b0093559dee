package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/management"
	"github.com/mailledger/mailledger/identity"
)

// UpdateUsers changes the users of in; a user the caller does not administer is
// ErrNotFound. An empty password leaves the password; group names a group of the
// user's tenant.
func (m *Management) UpdateUsers(ctx context.Context, c Caller, in []UserInput) (int, error) {
	if err := requireAdmin(c); err != nil {
		return 0, err
	}
	if err := validateAll(in, false); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for i := range in {
			if err := m.updateUser(ctx, ch, c, i, &in[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

func (m *Management) updateUser(ctx context.Context, ch *changes, c Caller, i int, in *UserInput) error {
	before, _, err := m.userInScope(ctx, ch, c, in.UID.Value)
	if err != nil {
		return err
	}
	after := *before
	setIf(&after.Username, in.Username)
	setIf(&after.Realname, in.Realname)
	setIf(&after.Email, in.Email)
	setIf(&after.Domain, in.Domain)
	setIf(&after.DN, in.DN)
	setIf(&after.SAMAccountName, in.SAMAccountName)
	setIf(&after.Group, in.Group)
	if in.IsAdmin.Set {
		after.Role = identity.Role(in.IsAdmin.Value)
	}
	changed := deref(in.Password) != ""
	if changed {
		after.PasswordHash = *in.Password
	}
	tenant, err := m.domainTenantTx(ctx, ch, c, after.Domain)
	if err != nil {
		return err
	}
	if err := groupExistsTx(ctx, ch, tenant, i, after.Group); err != nil {
		return err
	}
	if err := identity.UpdateTx(ctx, ch.tx.Tx, after); err != nil {
		if errors.Is(err, identity.ErrUserExists) {
			return fmt.Errorf("%w: user %s", ErrExists, after.Username)
		}
		return err
	}
	ev := management.NewChange(management.UserUpdated, "user", itoa(after.UID), userFields(*before), userFields(after), changed)
	return ch.record(ctx, tenant, ev)
}

func setIf(dst *string, src *string) {
	if src != nil {
		*dst = *src
	}
}

// userInScope reads user uid and its tenant; a user the caller does not administer is
// ErrNotFound.
func (m *Management) userInScope(ctx context.Context, ch *changes, c Caller, uid int64) (*identity.User, string, error) {
	u, err := identity.ByUIDTx(ctx, ch.tx.Tx, uid)
	if errors.Is(err, identity.ErrNoUser) {
		return nil, "", fmt.Errorf("%w: user %d", ErrNotFound, uid)
	}
	if err != nil {
		return nil, "", err
	}
	tenant, err := m.domainTenantTx(ctx, ch, c, u.Domain)
	if err != nil {
		return nil, "", fmt.Errorf("%w: user %d", ErrNotFound, uid)
	}
	return u, tenant, nil
}

// groupExistsTx checks that group ("" none) is a group of tenant.
func groupExistsTx(ctx context.Context, ch *changes, tenant string, i int, group string) error {
	if group == "" {
		return nil
	}
	var n int
	if err := ch.tx.QueryRow(ctx, `SELECT COUNT(*) FROM user_groups WHERE tenant_id = ? AND groupname = ?`, tenant, group).Scan(&n); err != nil {
		return fmt.Errorf("read group: %w", err)
	}
	if n == 0 {
		v := &domain.ValidationError{}
		v.Add(fieldOf(i, "group"), "no such group")
		return v
	}
	return nil
}

// DeleteUsers deletes the users of in (by uid; a username given must match).
func (m *Management) DeleteUsers(ctx context.Context, c Caller, in []UserInput) (int, error) {
	if err := requireAdmin(c); err != nil {
		return 0, err
	}
	v := &domain.ValidationError{}
	for i := range in {
		in[i].UID.check(v, i, "uid", 1, 1<<62)
	}
	if err := v.Err(); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for _, u := range in {
			before, tenant, err := m.userInScope(ctx, ch, c, u.UID.Value)
			if err != nil {
				return err
			}
			if u.Username != nil && *u.Username != "" && *u.Username != before.Username {
				return fmt.Errorf("%w: user %d named %s", ErrNotFound, u.UID.Value, *u.Username)
			}
			if err := identity.DeleteTx(ctx, ch.tx.Tx, before.UID); err != nil {
				return err
			}
			ev := management.NewChange(management.UserDeleted, "user", itoa(before.UID), userFields(*before), nil, false)
			if err := ch.record(ctx, tenant, ev); err != nil {
				return err
			}
		}
		return nil
	})
}
