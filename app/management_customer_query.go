package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain/management"
)

// CustomerView is a customer as the management API shows it: every value a string,
// unset ones null (piler's shapes). Status is set in the list only.
type CustomerView struct {
	ID               string  `json:"id"`
	CustomerID       string  `json:"customer_id"`
	CustomerAddress  *string `json:"customer_address"`
	GUIURL           *string `json:"gui_url"`
	Domain           string  `json:"domain"`
	Worker           *string `json:"worker"`
	Quota            *string `json:"quota"`
	Used             *string `json:"used"`
	RetentionDays    *string `json:"retention_days"`
	BrandingURL      *string `json:"branding_url"`
	BrandingLogo     *string `json:"branding_logo"`
	SupportLink      *string `json:"support_link"`
	BackgroundColour *string `json:"background_colour"`
	TextColour       *string `json:"text_colour"`
	EnablePurge      string  `json:"enable_purge"`
	Enabled          string  `json:"enabled"`
	Created          string  `json:"created"`
	Status           *string `json:"status,omitempty"`
}

const customerColumns = `id, customer_id, customer_address, gui_url, domain, worker, quota, retention_days, branding_url, branding_logo, support_link, background_colour, text_colour, enable_purge, enabled, created`

type scanner interface{ Scan(...any) error }

func scanCustomer(row scanner) (CustomerView, error) {
	var c CustomerView
	var id, created, purge, enabled int64
	var addr, gui, worker, brand, logo, support, bg, text sql.NullString
	var quota, retention sql.NullInt64
	err := row.Scan(&id, &c.CustomerID, &addr, &gui, &c.Domain, &worker, &quota, &retention, &brand, &logo, &support, &bg, &text, &purge, &enabled, &created)
	if err != nil {
		return c, err
	}
	c.ID, c.EnablePurge, c.Enabled, c.Created = itoa(id), itoa(purge), itoa(enabled), itoa(created)
	c.CustomerAddress, c.GUIURL, c.Worker = nullStr(addr), nullStr(gui), nullStr(worker)
	c.BrandingURL, c.BrandingLogo, c.SupportLink = nullStr(brand), nullStr(logo), nullStr(support)
	c.BackgroundColour, c.TextColour = nullStr(bg), nullStr(text)
	c.Quota, c.RetentionDays = nullNum(quota), nullNum(retention)
	return c, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func nullStr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

func nullNum(n sql.NullInt64) *string {
	if !n.Valid {
		return nil
	}
	s := itoa(n.Int64)
	return &s
}

// fields is the customer as a ledger event's before or after.
func (c *CustomerView) fields() map[string]any {
	return map[string]any{"id": c.ID, "customer_id": c.CustomerID, "customer_address": c.CustomerAddress, "gui_url": c.GUIURL,
		"domain": c.Domain, "worker": c.Worker, "quota": c.Quota, "retention_days": c.RetentionDays, "branding_url": c.BrandingURL,
		"branding_logo": c.BrandingLogo, "support_link": c.SupportLink, "background_colour": c.BackgroundColour,
		"text_colour": c.TextColour, "enable_purge": c.EnablePurge, "enabled": c.Enabled}
}

// customerTx reads customer customerID in tx; a missing one is ErrNotFound.
func customerTx(ctx context.Context, tx *database.Tx, customerID string) (*CustomerView, error) {
	c, err := scanCustomer(tx.QueryRow(ctx, `SELECT `+customerColumns+` FROM customers WHERE customer_id = ?`+database.ForUpdate(tx.Dialect), customerID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: customer %s", ErrNotFound, customerID)
	}
	if err != nil {
		return nil, fmt.Errorf("read customer: %w", err)
	}
	return &c, nil
}

// Customers lists the customers the caller administers (all for a global
// administrator), with used and status.
func (m *Management) Customers(ctx context.Context, c Caller) ([]CustomerView, error) {
	if err := requireAdmin(c); err != nil {
		return nil, err
	}
	q, args := `SELECT `+customerColumns+` FROM customers`, []any{}
	if !c.Scope.IsGlobalAdmin() {
		q, args = q+` WHERE id = ?`, []any{c.Scope.Customer.ID}
	}
	list, err := queryRows(ctx, m.store.DB(), "customers", func(rows *sql.Rows) (CustomerView, error) { return scanCustomer(rows) }, q+` ORDER BY customer_id`, args...)
	if err != nil {
		return nil, err
	}
	storeErr := m.checkStore(ctx)
	for i := range list {
		status := "OK"
		if err := m.fillUsed(ctx, &list[i]); err != nil {
			status = "database: " + err.Error()
		} else if storeErr != nil {
			status = "store: " + storeErr.Error()
		}
		list[i].Status = &status
	}
	return list, nil
}

// Customer returns customer id (its numeric id) without status; another customer than
// a customer administrator's own is ErrNotFound.
func (m *Management) Customer(ctx context.Context, c Caller, id string) (*CustomerView, error) {
	if err := requireAdmin(c); err != nil {
		return nil, err
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || (!c.Scope.IsGlobalAdmin() && n != c.Scope.Customer.ID) {
		return nil, fmt.Errorf("%w: customer %s", ErrNotFound, id)
	}
	db := m.store.DB()
	cu, err := scanCustomer(db.QueryRowContext(ctx, db.Rebind(`SELECT `+customerColumns+` FROM customers WHERE id = ?`), n))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: customer %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read customer: %w", err)
	}
	return &cu, m.fillUsed(ctx, &cu)
}

// fillUsed sets the bytes the customer's tenant stores: the store's figure (the bucket
// statistics in S3 mode), else the sum of its messages' sizes.
func (m *Management) fillUsed(ctx context.Context, c *CustomerView) error {
	tenant := m.tenancy.tenantOf(c.CustomerID)
	if m.cfg.Storage != nil {
		n, ok, err := m.cfg.Storage.Used(ctx, tenant)
		if err != nil {
			return fmt.Errorf("read used: %w", err)
		}
		if ok {
			c.Used = nullNum(sql.NullInt64{Int64: n, Valid: true})
			return nil
		}
	}
	db := m.store.DB()
	var used sql.NullInt64
	err := db.QueryRowContext(ctx, db.Rebind(`SELECT SUM(size) FROM metadata WHERE tenant_id = ? AND deleted = 0`), tenant).Scan(&used)
	if err != nil {
		return fmt.Errorf("read used: %w", err)
	}
	c.Used = nullNum(sql.NullInt64{Int64: used.Int64, Valid: true})
	return nil
}

// checkStore is the store's answer, nil without a Storage.
func (m *Management) checkStore(ctx context.Context) error {
	if m.cfg.Storage == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return m.cfg.Storage.Check(ctx)
}

// UpdateCustomers changes the customers of in. A customer administrator may change only
// their own customer's branding fields (another customer is ErrNotFound).
func (m *Management) UpdateCustomers(ctx context.Context, c Caller, in []CustomerInput) (int, error) {
	if err := requireAdmin(c); err != nil {
		return 0, err
	}
	if err := checkCustomerUpdates(c, in); err != nil {
		return 0, err
	}
	return m.write(ctx, c, len(in), func(ch *changes) error {
		for i := range in {
			if err := m.updateCustomer(ctx, ch, &in[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

func (m *Management) updateCustomer(ctx context.Context, ch *changes, in *CustomerInput) error {
	before, err := customerTx(ctx, ch.tx.Tx, in.CustomerID)
	if err != nil {
		return err
	}
	set, args := customerSets(in)
	if len(set) > 0 {
		q := `UPDATE customers SET ` + set + ` WHERE customer_id = ?`
		_, err = ch.tx.Exec(ctx, q, append(args, in.CustomerID)...)
		if database.IsUniqueViolation(err) {
			return fmt.Errorf("%w: the domain of customer %s", ErrExists, in.CustomerID)
		}
		if err != nil {
			return fmt.Errorf("update customer: %w", err)
		}
	}
	after, err := customerTx(ctx, ch.tx.Tx, in.CustomerID)
	if err != nil {
		return err
	}
	ev := management.NewChange(management.CustomerUpdated, "customer", in.CustomerID, before.fields(), after.fields(), false)
	return ch.record(ctx, m.tenancy.tenantOf(in.CustomerID), ev)
}
