package app

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/management"
	"github.com/mailledger/mailledger/identity"
)

// DomainView is one element of get_domains. Ldap is the directory configuration's name
// (its id: mailledger keeps no directory configurations), null when none.
type DomainView struct {
	Domain string  `json:"domain"`
	Mapped string  `json:"mapped"`
	Ldap   *string `json:"ldap"`
}

// DomainInput is an element of add_domain and delete_domain.
type DomainInput struct {
	Domain string `json:"domain"`
	Mapped string `json:"mapped"`
	LdapID string `json:"ldap_id"`
}

// Domains lists the domains: every one for a global administrator, those of their
// customer (its domain and the ones mapped to it) for a customer administrator.
func (m *Management) Domains(ctx context.Context, c Caller) ([]DomainView, error) {
	if err := requireAdmin(c); err != nil {
		return nil, err
	}
	q, args := `SELECT domain, mapped, ldap_id FROM domains`, []any{}
	if !c.Scope.IsGlobalAdmin() {
		q, args = q+` WHERE domain = ? OR mapped = ?`, []any{c.Scope.Customer.Domain, c.Scope.Customer.Domain}
	}
	return queryRows(ctx, m.store.DB(), "domains", func(rows *sql.Rows) (DomainView, error) {
		var d DomainView
		var ldap string
		err := rows.Scan(&d.Domain, &d.Mapped, &ldap)
		if ldap != "" {
			d.Ldap = &ldap
		}
		return d, err
	}, q+` ORDER BY domain`, args...)
}

// AddDomains adds the domains of in (global administrators only).
func (m *Management) AddDomains(ctx context.Context, c Caller, in []DomainInput) (int, error) {
	if err := requireGlobal(c); err != nil {
		return 0, err
	}
	if err := normalizeDomains(in, true); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for _, d := range in {
			if err := addDomain(ctx, ch, d); err != nil {
				return err
			}
		}
		return nil
	})
}

func normalizeDomains(in []DomainInput, add bool) error {
	v := &domain.ValidationError{}
	for i := range in {
		d, ok := domainName(in[i].Domain)
		if !ok {
			v.Add(fieldOf(i, "domain"), "must be a domain name")
		}
		in[i].Domain = d
		if !add || in[i].Mapped == "" {
			continue
		}
		if in[i].Mapped, ok = domainName(in[i].Mapped); !ok {
			v.Add(fieldOf(i, "mapped"), "must be empty or a domain name")
		}
		if len(in[i].LdapID) > 64 {
			v.Add(fieldOf(i, "ldap_id"), "must be at most 64 characters")
		}
	}
	return v.Err()
}

func addDomain(ctx context.Context, ch *changes, d DomainInput) error {
	_, err := ch.tx.Exec(ctx, `INSERT INTO domains (domain, mapped, ldap_id) VALUES (?, ?, ?)`, d.Domain, d.Mapped, d.LdapID)
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("%w: domain %s", ErrExists, d.Domain)
	}
	if err != nil {
		return fmt.Errorf("add domain: %w", err)
	}
	after := map[string]any{"domain": d.Domain, "mapped": d.Mapped, "ldap_id": d.LdapID}
	return ch.record(ctx, DefaultTenant, management.NewChange(management.DomainAdded, "domain", d.Domain, nil, after, false))
}

// DeleteDomains deletes the domains of in (global administrators only); a domain that
// still has users or a customer is ErrInUse.
func (m *Management) DeleteDomains(ctx context.Context, c Caller, in []DomainInput) (int, error) {
	if err := requireGlobal(c); err != nil {
		return 0, err
	}
	if err := normalizeDomains(in, false); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for _, d := range in {
			if err := deleteDomain(ctx, ch, d.Domain); err != nil {
				return err
			}
		}
		return nil
	})
}

func deleteDomain(ctx context.Context, ch *changes, name string) error {
	var before DomainInput
	err := ch.tx.QueryRow(ctx, `SELECT domain, mapped, ldap_id FROM domains WHERE domain = ?`, name).Scan(&before.Domain, &before.Mapped, &before.LdapID)
	if err == sql.ErrNoRows {
		return fmt.Errorf("%w: domain %s", ErrNotFound, name)
	}
	if err != nil {
		return fmt.Errorf("read domain: %w", err)
	}
	users, err := identity.CountInDomainTx(ctx, ch.tx.Tx, name)
	if err != nil {
		return err
	}
	var customers int
	if err := ch.tx.QueryRow(ctx, `SELECT COUNT(*) FROM customers WHERE domain = ?`, name).Scan(&customers); err != nil {
		return fmt.Errorf("count customers: %w", err)
	}
	if users > 0 || customers > 0 {
		return fmt.Errorf("%w: domain %s has %d users and %d customers", ErrInUse, name, users, customers)
	}
	if _, err := ch.tx.Exec(ctx, `DELETE FROM domains WHERE domain = ?`, name); err != nil {
		return fmt.Errorf("delete domain: %w", err)
	}
	b := map[string]any{"domain": before.Domain, "mapped": before.Mapped, "ldap_id": before.LdapID}
	return ch.record(ctx, DefaultTenant, management.NewChange(management.DomainDeleted, "domain", name, b, nil, false))
}
