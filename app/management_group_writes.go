package app

import (
	"context"
	"fmt"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/management"
)

// UpdateGroups changes the groups of in (by id) in the caller's site tenant.
func (m *Management) UpdateGroups(ctx context.Context, c Caller, in []GroupInput) (int, error) {
	tenant, err := siteTenant(c)
	if err != nil {
		return 0, err
	}
	if err := validateGroups(in, false); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for _, g := range in {
			before, err := groupTx(ctx, ch, tenant, `id = ?`, g.ID.Value)
			if err != nil {
				return err
			}
			_, err = ch.tx.Exec(ctx, `UPDATE user_groups SET groupname = ?, email = ?, assigned_email = ? WHERE id = ?`, *g.Groupname, *g.Email, *g.AssignedEmail, g.ID.Value)
			if database.IsUniqueViolation(err) {
				return fmt.Errorf("%w: group %s", ErrExists, *g.Groupname)
			}
			if err != nil {
				return fmt.Errorf("update group: %w", err)
			}
			after := GroupView{ID: before.ID, Groupname: *g.Groupname, Email: *g.Email, AssignedEmail: *g.AssignedEmail}
			if err := ch.record(ctx, tenant, management.NewChange(management.GroupUpdated, "group", before.ID, before.fields(), after.fields(), false)); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteGroups deletes the groups of in (by id) from the caller's site tenant.
func (m *Management) DeleteGroups(ctx context.Context, c Caller, in []GroupInput) (int, error) {
	tenant, err := siteTenant(c)
	if err != nil {
		return 0, err
	}
	if err := checkIDs(len(in), func(i int) Number { return in[i].ID }); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for _, g := range in {
			before, err := groupTx(ctx, ch, tenant, `id = ?`, g.ID.Value)
			if err != nil {
				return err
			}
			if _, err := ch.tx.Exec(ctx, `DELETE FROM user_groups WHERE id = ?`, g.ID.Value); err != nil {
				return fmt.Errorf("delete group: %w", err)
			}
			if err := ch.record(ctx, tenant, management.NewChange(management.GroupDeleted, "group", before.ID, before.fields(), nil, false)); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkIDs requires element i's id (of n) to be a positive whole number.
func checkIDs(n int, id func(i int) Number) error {
	v := &domain.ValidationError{}
	for i := 0; i < n; i++ {
		id(i).check(v, i, "id", 1, 1<<62)
		if !id(i).Set {
			v.Add(fieldOf(i, "id"), "is required")
		}
	}
	return v.Err()
}
