package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// The kinds of retention rule.
const (
	RetentionSender    = "sender"    // mail the address sent (its sender role)
	RetentionRecipient = "recipient" // mail the address received (its recipient role)
	RetentionDomain    = "domain"    // mail an address of the domain sent or received
)

// RetentionPolicyConfig configures a RetentionPolicy. The zero value takes the defaults.
type RetentionPolicyConfig struct {
	Refresh time.Duration // DefaultHeaderRulesRefresh when 0: the same as the header checks'
	Logger  *slog.Logger  // slog.Default() when nil
}

// RetentionPolicy is the archive's archive.RetentionPolicy over the retention_rules table
// and the customers' retention_days: the most specific rule that matches a message by the
// address rule's roles sets its retention. An address rule (sender or recipient) wins
// over a domain rule, a domain rule over the customer's retention_days; among rules of the
// same kind that match, the longest wins. No match: the archive's default. Rules are kept
// per tenant and read again as the HeaderTagger's are.
type RetentionPolicy struct {
	db  *database.DB
	cfg RetentionPolicyConfig

	mu         sync.Mutex
	generation uint64
	byTenant   map[string]tenantRetention
}

type tenantRetention struct {
	rules      []retentionRule
	tenantDays int // the customer's retention_days; 0 when none
	loaded     time.Time
	generation uint64
}

type retentionRule struct {
	kind, value string
	days        int
}

// NewRetentionPolicy returns a RetentionPolicy over db (migrated).
func NewRetentionPolicy(db *database.DB, cfg RetentionPolicyConfig) (*RetentionPolicy, error) {
	if db == nil {
		return nil, errors.New("app: the retention policy needs a database")
	}
	if cfg.Refresh < 0 {
		return nil, errors.New("app: retention rules refresh must not be negative")
	}
	if cfg.Refresh == 0 {
		cfg.Refresh = DefaultHeaderRulesRefresh
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &RetentionPolicy{db: db, cfg: cfg, byTenant: map[string]tenantRetention{}}, nil
}

// Retention implements archive.RetentionPolicy.
func (p *RetentionPolicy) Retention(tenant string, roles []analyzer.Address) (time.Duration, bool) {
	t := p.load(tenant)
	days, level := 0, 0 // level: 2 an address rule, 1 a domain rule
	for _, r := range t.rules {
		l := ruleLevel(r, roles)
		if l > level || (l == level && l > 0 && r.days > days) {
			days, level = r.days, l
		}
	}
	if level == 0 {
		days = t.tenantDays
	}
	if days <= 0 {
		return 0, false
	}
	return time.Duration(days) * 24 * time.Hour, true
}

// ruleLevel is how specifically r matches a message of roles: 2 by an address, 1 by a
// domain, 0 not at all.
func ruleLevel(r retentionRule, roles []analyzer.Address) int {
	for _, a := range roles {
		switch {
		case r.kind == RetentionSender && a.Role == analyzer.Sender && a.Key == r.value,
			r.kind == RetentionRecipient && a.Role == analyzer.Recipient && a.Key == r.value:
			return 2
		case r.kind == RetentionDomain && analyzer.DomainOf(a.Key) == r.value:
			return 1
		}
	}
	return 0
}

// Invalidate makes every tenant's rules be read again before the next message.
func (p *RetentionPolicy) Invalidate() {
	p.mu.Lock()
	p.generation++
	p.mu.Unlock()
}

// load returns tenant's rules, read again when they are stale; a read that fails keeps
// the last rules read until the next refresh.
func (p *RetentionPolicy) load(tenant string) tenantRetention {
	p.mu.Lock()
	cur, ok := p.byTenant[tenant]
	gen := p.generation
	p.mu.Unlock()
	if ok && cur.generation == gen && time.Since(cur.loaded) < p.cfg.Refresh {
		return cur
	}
	ctx, cancel := context.WithTimeout(context.Background(), headerRulesLoadTimeout)
	defer cancel()
	next, err := readRetention(ctx, p.db, tenant)
	if err != nil {
		p.cfg.Logger.Warn("retention rules could not be read; the last rules read stay in use", "tenant", tenant, "error", err.Error())
		next = cur
	}
	next.loaded, next.generation = time.Now(), gen
	p.mu.Lock()
	p.byTenant[tenant] = next
	p.mu.Unlock()
	return next
}

// readRetention reads tenant's retention rules and its customer's retention_days.
func readRetention(ctx context.Context, db *database.DB, tenant string) (tenantRetention, error) {
	var t tenantRetention
	var err error
	t.rules, err = queryRows(ctx, db, "retention rules", func(rows *sql.Rows) (retentionRule, error) {
		var r retentionRule
		return r, rows.Scan(&r.kind, &r.value, &r.days)
	}, `SELECT kind, value, days FROM retention_rules WHERE tenant_id = ?`, tenant)
	if err != nil {
		return t, err
	}
	var days sql.NullInt64
	err = db.QueryRowContext(ctx, db.Rebind(`SELECT retention_days FROM customers WHERE customer_id = ?`), tenant).Scan(&days)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("read the customer's retention: %w", err)
	}
	t.tenantDays = int(days.Int64)
	return t, nil
}
