package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/fault"
	"github.com/mailledger/mailledger/domain/management"
	"github.com/mailledger/mailledger/eventstore"
)

// Errors of the management API.
var (
	// ErrForbidden means the caller's role may not make this call.
	ErrForbidden = fault.New(fault.Forbidden, "forbidden")
	// ErrExists means a customer, domain, user or group of that name exists already (or
	// twice in one array).
	ErrExists = fault.New(fault.Conflict, "already exists")
	// ErrInUse means a domain still has users or a customer.
	ErrInUse = fault.New(fault.Conflict, "in use")
)

// ManagementConfig configures the management API's use cases. The zero value takes
// every default.
type ManagementConfig struct {
	// Multitenancy is MULTITENANCY: customers are tenants (customer_id is the tenant).
	Multitenancy bool
	// Now is the clock of customers' created times; time.Now when nil.
	Now func() time.Time
	// HeaderChecksChanged is called after a committed change of header checks (the
	// HeaderTagger's Invalidate), so that the next message is tagged by the new rules.
	HeaderChecksChanged func()
	// Storage reports the message store's usage and health for the customer list; nil:
	// the sum of the tenant's message sizes, and no store check.
	Storage StorageUsage
}

// StorageUsage is the message store as the customer list shows it (`used`, `status`).
type StorageUsage interface {
	// Used is what tenant's mail takes in the store; ok false when the store has no
	// figure (yet), and the sum of the messages' sizes is shown instead.
	Used(ctx context.Context, tenant string) (bytes int64, ok bool, err error)
	// Check says whether the store answers.
	Check(ctx context.Context) error
}

func (c *ManagementConfig) setDefaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate reports every invalid setting at once (none can be, today).
func (c ManagementConfig) Validate() error { return nil }

// Management applies the management API's calls (domains, customers, users, groups,
// header checks). A write array is applied in one transaction, all or nothing, and each
// applied element appends one ledger event (domain/management) in it.
type Management struct {
	store   *eventstore.Store
	tenancy *Tenancy
	cfg     ManagementConfig
	// headerVersion counts this node's header-check changes (HeaderChecksVersion).
	headerVersion atomic.Uint64
}

// NewManagement returns the management use cases over store; it rejects nil
// dependencies and an invalid cfg.
func NewManagement(store *eventstore.Store, tenancy *Tenancy, cfg ManagementConfig) (*Management, error) {
	if store == nil || tenancy == nil {
		return nil, errors.New("app: management needs a store and the tenancy")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Management{store: store, tenancy: tenancy, cfg: cfg}, nil
}

// Caller is who makes a management call: the resolved scope and the event metadata
// (actor, client IP).
type Caller struct {
	Scope Scope
	Meta  domain.Metadata
}

// requireAdmin admits global and customer administrators.
func requireAdmin(c Caller) error {
	if c.Scope.IsGlobalAdmin() || c.Scope.CustomerAdmin() {
		return nil
	}
	return ErrForbidden
}

// requireGlobal admits global administrators, and refuses every other administrator.
func requireGlobal(c Caller) error {
	if err := requireAdmin(c); err != nil {
		return err
	}
	if !c.Scope.IsGlobalAdmin() {
		return fmt.Errorf("%w: only the service's administrators may make this call", ErrForbidden)
	}
	return nil
}

// changes collects the events of one write array.
type changes struct {
	tx     *ledgerTx
	md     domain.Metadata
	header bool
}

// record appends the event of one applied element to the object's stream in tenant.
func (ch *changes) record(ctx context.Context, tenant string, ev *management.Change) error {
	stream := eventstore.Stream{ID: management.StreamID(ev.Object, ev.Key), Type: management.StreamType, TenantID: tenant}
	if _, err := ch.tx.append(ctx, stream, eventstore.AnyVersion, eventstore.FromDomain(ev, ch.md)); err != nil {
		return err
	}
	ch.header = ch.header || ev.Object == "header_check"
	return nil
}

// write runs fn, which applies the n elements of a write array, in one ledger
// transaction, and returns n once it has committed.
func (m *Management) write(ctx context.Context, c Caller, n int, fn func(ch *changes) error) (int, error) {
	ch := &changes{md: c.Meta}
	err := inLedgerTx(ctx, m.store, func(tx *ledgerTx) error {
		ch.tx = tx
		return fn(ch)
	})
	if err != nil {
		return 0, err
	}
	if ch.header {
		m.headerVersion.Add(1)
		if m.cfg.HeaderChecksChanged != nil {
			m.cfg.HeaderChecksChanged()
		}
	}
	return n, nil
}

// Number is a number the management API accepts as a JSON number or a numeric string
// (piler's clients send both); null or "" is unset.
type Number struct {
	Set   bool
	Value int64
	bad   bool
}

// UnmarshalJSON reads a number, a numeric string or null; anything else is remembered as
// bad, reported by validation with the element's index and field.
func (n *Number) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*n = Number{}
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s = strings.TrimSpace(s); s == "" {
			*n = Number{}
			return nil
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	*n = Number{Set: err == nil, Value: v, bad: err != nil}
	return nil
}

// check reports field of element i as invalid when n is not a number in [lo, hi].
func (n Number) check(v *domain.ValidationError, i int, field string, lo, hi int64) {
	if n.bad || (n.Set && (n.Value < lo || n.Value > hi)) {
		v.Add(fieldOf(i, field), fmt.Sprintf("must be a whole number from %d to %d", lo, hi))
	}
}

// fieldOf names field of array element i in a validation error: "0.domain".
func fieldOf(i int, field string) string { return strconv.Itoa(i) + "." + field }

// HeaderChecksVersion counts the header-check changes this node applied; the SMTP
// receiver and the importer reload HeaderRules when it moves. (Other nodes' changes are
// the ledger's management.header_check_* events, which an eventstore subscription sees.)
func (m *Management) HeaderChecksVersion() uint64 { return m.headerVersion.Load() }
