package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/management"
)

// GroupInput is an element of get_group, add_group, update_group and delete_group.
type GroupInput struct {
	ID            Number  `json:"id"`
	Groupname     *string `json:"groupname"`
	Email         *string `json:"email"`
	AssignedEmail *string `json:"assigned_email"`
}

// GroupView is a group: its addresses a set, lower-cased and sorted, one a line.
type GroupView struct {
	ID            string `json:"id"`
	Groupname     string `json:"groupname"`
	Email         string `json:"email"`
	AssignedEmail string `json:"assigned_email"`
}

// addressSet validates a newline-separated list and returns it as a set.
func addressSet(v *domain.ValidationError, i int, field string, s *string) string {
	var out []string
	for _, line := range strings.Split(strings.ReplaceAll(deref(s), "\r", ""), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		a, ok := address(line)
		if !ok {
			v.Add(fieldOf(i, field), fmt.Sprintf("%q is not an email address", strings.TrimSpace(line)))
		}
		out = append(out, a)
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), "\n")
}

// siteWrite checks the caller and returns the tenant of a group or header-check call.
func siteTenant(c Caller) (string, error) {
	if err := requireAdmin(c); err != nil {
		return "", err
	}
	return c.Scope.SiteTenant()
}

// Groups lists the groups of the caller's site tenant.
func (m *Management) Groups(ctx context.Context, c Caller) ([]GroupView, error) {
	tenant, err := siteTenant(c)
	if err != nil {
		return nil, err
	}
	return queryRows(ctx, m.store.DB(), "groups", scanGroup, `SELECT id, groupname, email, assigned_email FROM user_groups WHERE tenant_id = ? ORDER BY groupname`, tenant)
}

func scanGroup(rows *sql.Rows) (GroupView, error) {
	var g GroupView
	var id int64
	err := rows.Scan(&id, &g.Groupname, &g.Email, &g.AssignedEmail)
	g.ID = itoa(id)
	return g, err
}

// Group returns the groups of in, by id.
func (m *Management) Group(ctx context.Context, c Caller, in []GroupInput) ([]GroupView, error) {
	tenant, err := siteTenant(c)
	if err != nil {
		return nil, err
	}
	out := []GroupView{}
	for _, g := range in {
		got, err := queryRows(ctx, m.store.DB(), "group", scanGroup, `SELECT id, groupname, email, assigned_email FROM user_groups WHERE tenant_id = ? AND id = ?`, tenant, g.ID.Value)
		if err != nil {
			return nil, err
		}
		if len(got) == 0 {
			return nil, fmt.Errorf("%w: group %d", ErrNotFound, g.ID.Value)
		}
		out = append(out, got[0])
	}
	return out, nil
}

func validateGroups(in []GroupInput, add bool) error {
	v := &domain.ValidationError{}
	for i := range in {
		if n := len(strings.TrimSpace(deref(in[i].Groupname))); n == 0 || n > 255 {
			v.Add(fieldOf(i, "groupname"), "must be 1 to 255 characters")
		}
		email, assigned := addressSet(v, i, "email", in[i].Email), addressSet(v, i, "assigned_email", in[i].AssignedEmail)
		name := strings.TrimSpace(deref(in[i].Groupname))
		in[i].Groupname, in[i].Email, in[i].AssignedEmail = &name, &email, &assigned
		if !add {
			in[i].ID.check(v, i, "id", 1, 1<<62)
		}
	}
	return v.Err()
}

// AddGroups adds the groups of in to the caller's site tenant.
func (m *Management) AddGroups(ctx context.Context, c Caller, in []GroupInput) (int, error) {
	tenant, err := siteTenant(c)
	if err != nil {
		return 0, err
	}
	if err := validateGroups(in, true); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for _, g := range in {
			_, err := ch.tx.Exec(ctx, `INSERT INTO user_groups (tenant_id, groupname, email, assigned_email) VALUES (?, ?, ?, ?)`, tenant, *g.Groupname, *g.Email, *g.AssignedEmail)
			if database.IsUniqueViolation(err) {
				return fmt.Errorf("%w: group %s", ErrExists, *g.Groupname)
			}
			if err != nil {
				return fmt.Errorf("add group: %w", err)
			}
			after, err := groupTx(ctx, ch, tenant, `groupname = ?`, *g.Groupname)
			if err != nil {
				return err
			}
			if err := ch.record(ctx, tenant, management.NewChange(management.GroupAdded, "group", after.ID, nil, after.fields(), false)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (g *GroupView) fields() map[string]any {
	return map[string]any{"id": g.ID, "groupname": g.Groupname, "email": g.Email, "assigned_email": g.AssignedEmail}
}

// groupTx reads the group of tenant that where selects; none is ErrNotFound.
func groupTx(ctx context.Context, ch *changes, tenant, where string, arg any) (*GroupView, error) {
	var g GroupView
	var id int64
	err := ch.tx.QueryRow(ctx, `SELECT id, groupname, email, assigned_email FROM user_groups WHERE tenant_id = ? AND `+where, tenant, arg).
		Scan(&id, &g.Groupname, &g.Email, &g.AssignedEmail)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: group %v", ErrNotFound, arg)
	}
	if err != nil {
		return nil, fmt.Errorf("read group: %w", err)
	}
	g.ID = itoa(id)
	return &g, nil
}
