package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/management"
)

// HeaderCheckInput is an element of add_header_check and delete_header_check.
type HeaderCheckInput struct {
	ID      Number `json:"id"`
	Pattern string `json:"pattern"`
	Tag     string `json:"tag"`
}

// HeaderCheckView is one element of get_header_checks.
type HeaderCheckView struct {
	ID      string `json:"id"`
	Pattern string `json:"pattern"`
	Tag     string `json:"tag"`
}

// HeaderRule is a header check compiled (RE2), for the SMTP receiver and the importer.
type HeaderRule struct {
	ID     int64
	Regexp *regexp.Regexp
	Tag    string
}

// HeaderChecks lists the header checks of the caller's site tenant, oldest first.
func (m *Management) HeaderChecks(ctx context.Context, c Caller) ([]HeaderCheckView, error) {
	tenant, err := siteTenant(c)
	if err != nil {
		return nil, err
	}
	return queryRows(ctx, m.store.DB(), "header checks", func(rows *sql.Rows) (HeaderCheckView, error) {
		var h HeaderCheckView
		var id int64
		err := rows.Scan(&id, &h.Pattern, &h.Tag)
		h.ID = itoa(id)
		return h, err
	}, `SELECT id, pattern, tag FROM header_checks WHERE tenant_id = ? ORDER BY id`, tenant)
}

// HeaderRules loads the current header checks of tenant, compiled: what ingest applies.
// Reload them when HeaderChecksVersion moves (or on a management.header_check_* event).
func (m *Management) HeaderRules(ctx context.Context, tenant string) ([]HeaderRule, error) {
	return loadHeaderRules(ctx, m.store.DB(), tenant)
}

// loadHeaderRules reads and compiles the header checks of tenant, oldest first.
func loadHeaderRules(ctx context.Context, db *database.DB, tenant string) ([]HeaderRule, error) {
	return queryRows(ctx, db, "header checks", func(rows *sql.Rows) (HeaderRule, error) {
		var r HeaderRule
		var pattern string
		if err := rows.Scan(&r.ID, &pattern, &r.Tag); err != nil {
			return r, fmt.Errorf("scan header check: %w", err)
		}
		re, err := regexp.Compile(pattern)
		r.Regexp = re
		return r, err
	}, `SELECT id, pattern, tag FROM header_checks WHERE tenant_id = ? ORDER BY id`, tenant)
}

// AddHeaderChecks adds the rules of in to the caller's site tenant; each pattern must
// compile as RE2.
func (m *Management) AddHeaderChecks(ctx context.Context, c Caller, in []HeaderCheckInput) (int, error) {
	tenant, err := siteTenant(c)
	if err != nil {
		return 0, err
	}
	v := &domain.ValidationError{}
	for i, h := range in {
		if _, err := regexp.Compile(h.Pattern); err != nil || h.Pattern == "" || len(h.Pattern) > 1024 {
			v.Add(fieldOf(i, "pattern"), "must be an RE2 regular expression of 1 to 1024 characters")
		}
		if h.Tag == "" || len(h.Tag) > 255 {
			v.Add(fieldOf(i, "tag"), "must be 1 to 255 characters")
		}
	}
	if err := v.Err(); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for _, h := range in {
			id, err := ch.tx.InsertID(ctx, `INSERT INTO header_checks (tenant_id, pattern, tag) VALUES (?, ?, ?)`, tenant, h.Pattern, h.Tag)
			if err != nil {
				return fmt.Errorf("add header check: %w", err)
			}
			after := map[string]any{"id": id, "pattern": h.Pattern, "tag": h.Tag}
			if err := ch.record(ctx, tenant, management.NewChange(management.HeaderCheckAdded, "header_check", itoa(id), nil, after, false)); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteHeaderChecks deletes the rules of in (by id) from the caller's site tenant.
func (m *Management) DeleteHeaderChecks(ctx context.Context, c Caller, in []HeaderCheckInput) (int, error) {
	tenant, err := siteTenant(c)
	if err != nil {
		return 0, err
	}
	if err := checkIDs(len(in), func(i int) Number { return in[i].ID }); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for _, h := range in {
			var before HeaderCheckView
			err := ch.tx.QueryRow(ctx, `SELECT pattern, tag FROM header_checks WHERE tenant_id = ? AND id = ?`, tenant, h.ID.Value).Scan(&before.Pattern, &before.Tag)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: header check %d", ErrNotFound, h.ID.Value)
			}
			if err != nil {
				return fmt.Errorf("read header check: %w", err)
			}
			if _, err := ch.tx.Exec(ctx, `DELETE FROM header_checks WHERE id = ?`, h.ID.Value); err != nil {
				return fmt.Errorf("delete header check: %w", err)
			}
			b := map[string]any{"id": h.ID.Value, "pattern": before.Pattern, "tag": before.Tag}
			if err := ch.record(ctx, tenant, management.NewChange(management.HeaderCheckDeleted, "header_check", itoa(h.ID.Value), b, nil, false)); err != nil {
				return err
			}
		}
		return nil
	})
}
