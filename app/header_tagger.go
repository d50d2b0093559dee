package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mailledger/mailledger/database"
)

// DefaultHeaderRulesRefresh is how long a HeaderTagger keeps a tenant's rules before it
// reads them again: the longest a change made elsewhere (another process, another node)
// takes to apply. A change through this process's API applies at once (Invalidate).
const DefaultHeaderRulesRefresh = 10 * time.Second

// headerRulesLoadTimeout bounds one read of a tenant's rules.
const headerRulesLoadTimeout = 5 * time.Second

// HeaderTaggerConfig configures a HeaderTagger. The zero value takes the defaults.
type HeaderTaggerConfig struct {
	Refresh time.Duration // DefaultHeaderRulesRefresh when 0
	Logger  *slog.Logger  // slog.Default() when nil
}

// HeaderTagger is the archive's archive.HeaderTagger over the header_checks table: it
// tags a message with the tag of every rule of its tenant whose pattern matches its header
// block. Rules are kept per tenant and read again after Refresh or after Invalidate (a
// change through the management API, SIGHUP); a read that fails keeps the last rules read
// until the next refresh.
type HeaderTagger struct {
	db  *database.DB
	cfg HeaderTaggerConfig

	mu         sync.Mutex
	generation uint64
	byTenant   map[string]tenantRules
}

type tenantRules struct {
	rules      []HeaderRule
	loaded     time.Time
	generation uint64
}

// NewHeaderTagger returns a HeaderTagger over db (migrated).
func NewHeaderTagger(db *database.DB, cfg HeaderTaggerConfig) (*HeaderTagger, error) {
	if db == nil {
		return nil, errors.New("app: the header tagger needs a database")
	}
	if cfg.Refresh < 0 {
		return nil, errors.New("app: header rules refresh must not be negative")
	}
	if cfg.Refresh == 0 {
		cfg.Refresh = DefaultHeaderRulesRefresh
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &HeaderTagger{db: db, cfg: cfg, byTenant: map[string]tenantRules{}}, nil
}

// Tags implements archive.HeaderTagger.
func (h *HeaderTagger) Tags(tenant string, header []byte) []string {
	var out []string
	for _, r := range h.rules(tenant) {
		if r.Regexp.Match(header) {
			out = append(out, r.Tag)
		}
	}
	return out
}

// Invalidate makes every tenant's rules be read again before the next message.
func (h *HeaderTagger) Invalidate() {
	h.mu.Lock()
	h.generation++
	h.mu.Unlock()
}

// rules returns tenant's rules, read again when they are stale.
func (h *HeaderTagger) rules(tenant string) []HeaderRule {
	h.mu.Lock()
	cur, ok := h.byTenant[tenant]
	gen := h.generation
	h.mu.Unlock()
	if ok && cur.generation == gen && time.Since(cur.loaded) < h.cfg.Refresh {
		return cur.rules
	}
	ctx, cancel := context.WithTimeout(context.Background(), headerRulesLoadTimeout)
	defer cancel()
	rules, err := loadHeaderRules(ctx, h.db, tenant)
	if err != nil {
		h.cfg.Logger.Warn("header checks could not be read; the last rules read stay in use", "tenant", tenant, "error", err.Error())
		rules = cur.rules
	}
	h.mu.Lock()
	h.byTenant[tenant] = tenantRules{rules: rules, loaded: time.Now(), generation: gen}
	h.mu.Unlock()
	return rules
}
