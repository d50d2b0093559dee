package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// DefaultEraseBatch is how many messages one erasure transaction marks.
const DefaultEraseBatch = 1000

// Scope is what an erasure of some addresses would affect (docs/api.md). Only visible
// messages count: neither purged nor erased already.
type Scope struct {
	AsSender    int // messages in which one of the addresses has the sender role
	AsRecipient int // messages in which one of the addresses has the recipient role
	Attachments int // attachments of the distinct affected messages
	Affected    int // distinct affected messages
}

// Hold is an active legal hold that covers at least one affected message.
type Hold struct {
	ID, Type, Value string
}

// LockFunc runs first in every erasure and purge transaction. The application passes
// eventstore.LockHead: legal holds are placed by ledger appends, which take the same lock,
// so no hold can appear between the hold check of a batch and its changes.
type LockFunc func(ctx context.Context, tx *database.Tx) error

// flagged is a derived table "a" (id, s, r) of the messages, of any tenant and in any
// state, in which one of the addresses (keys) has a role (docs/address-rule.md): s is 1
// when one of them is a sender, r is 1 when one is a recipient. It reads the index
// address_role(addr, id) and no message's other roles; callers join metadata m on
// m.id = a.id and filter by tenant and state there.
func flagged(addrs []string) (string, []any) {
	return `(SELECT id, MAX(CASE WHEN role = ` + strconv.Itoa(roleSender) + ` THEN 1 ELSE 0 END) AS s,
		MAX(CASE WHEN role = ` + strconv.Itoa(roleRecipient) + ` THEN 1 ELSE 0 END) AS r
		FROM address_role WHERE addr IN (` + database.InList(len(addrs)) + `) GROUP BY id) a`, stringArgs(addrs)
}

// affectedCTE opens a WITH clause of one table, "am": the visible affected messages of
// tenant (id, attachments, s, r). SQLite would compute it again at each use unless told
// to materialize it; the others materialize a table used twice (MySQL knows no such
// keyword).
func (a *Archive) affectedCTE(tenant string, addrs []string) (string, []any) {
	mat := ""
	if a.db.Dialect == database.SQLite {
		mat = "MATERIALIZED "
	}
	from, args := flagged(addrs)
	return `WITH am AS ` + mat + `(SELECT m.id, m.attachments, a.s, a.r FROM ` + from +
		joinMetadata(a.db.Dialect) + `WHERE m.tenant_id = ? AND ` + visible + `)`, append(args, tenant)
}

// coveringHolds selects (id, type, value) of the active holds of a tenant (one argument)
// that cover a message of am (see affectedCTE): an address hold whose address, or a domain
// hold an address of whose domain, has a role in one of them. Each hold is one range of
// address_role (addr or domain) tested against the affected ids, so the cost grows with
// the holds and their own mail, never with every role of every affected message (the
// heaviest address's 195,000 messages of a million have 800,000).
const coveringHolds = `SELECT h.id, h.type, h.value FROM legal_holds h WHERE h.tenant_id = ? AND h.status = 'active' AND (
	(h.type = 'address' AND EXISTS (SELECT 1 FROM address_role hr WHERE hr.addr = h.value AND hr.id IN (SELECT id FROM am)))
	OR (h.type = 'domain' AND EXISTS (SELECT 1 FROM address_role hr WHERE hr.domain = h.value AND hr.id IN (SELECT id FROM am))))`

// joinMetadata joins metadata m to the affected ids a, telling SQLite and MySQL to read a
// first and look m up by primary key, whatever their statistics say: a tenant can hold
// millions of messages, of which an erasure touches a few.
func joinMetadata(d database.Dialect) string { return joinOn(d, "metadata m", "m.id = a.id") }

// joinOn joins table (with its alias) on cond, keeping the tables to its left first on
// SQLite and MySQL (see joinMetadata).
func joinOn(d database.Dialect, table, cond string) string {
	switch d {
	case database.SQLite:
		return ` CROSS JOIN ` + table + ` ON ` + cond + ` `
	case database.MySQL:
		return ` STRAIGHT_JOIN ` + table + ` ON ` + cond + ` `
	}
	return ` JOIN ` + table + ` ON ` + cond + ` `
}

// underActiveHold is true when an active hold of m's tenant covers message m: an address
// hold on an address with any role in it, or a domain hold on the domain of one
// (address_role): exactly the messages an erasure of that address or domain would
// affect. The type and status names are those of domain/legalhold. Each test looks one
// value up in legal_holds_active (tenant_id, status, type, value), so its cost does not
// grow with the number of holds (one test per type: SQLite would walk every active hold
// for "type = … AND value = … OR type = … AND value = …").
const underActiveHold = `EXISTS (SELECT 1 FROM address_role hr WHERE hr.id = m.id AND (` +
	heldValue + `'address' AND h.value = hr.addr) OR ` + heldValue + `'domain' AND h.value = hr.domain)))`

// heldValue opens the test for one active hold of m's tenant; the caller adds its type
// and value and closes the parenthesis.
const heldValue = `EXISTS (SELECT 1 FROM legal_holds h WHERE h.tenant_id = m.tenant_id AND h.status = 'active' AND h.type = `

// normalize maps each address to its key (analyzer.Normalize) and de-duplicates them. An
// address the rule refuses (the request layers refuse those before) is kept lower-cased
// and trimmed, as the rows of messages archived before the rule were written; one
// without "@" is dropped.
func normalize(addrs []string) []string {
	keys := make([]string, 0, len(addrs))
	for _, addr := range addrs {
		if key, err := analyzer.Normalize(addr); err == nil {
			keys = append(keys, key)
		} else {
			keys = appendAddresses(keys, addr)
		}
	}
	return appendAddresses(nil, keys...)
}

// Scope counts the visible messages of tenant that an erasure of addrs would affect, in
// one query over the indexes; no message is loaded.
func (a *Archive) Scope(ctx context.Context, tenant string, addrs []string) (Scope, error) {
	addrs = normalize(addrs)
	if len(addrs) == 0 {
		return Scope{}, nil
	}
	from, args := flagged(addrs)
	q := `SELECT COUNT(*), COALESCE(SUM(m.attachments), 0), COALESCE(SUM(a.s), 0), COALESCE(SUM(a.r), 0) FROM ` + from +
		joinMetadata(a.db.Dialect) + `WHERE m.tenant_id = ? AND ` + visible
	var sc scopeRow
	if err := a.db.QueryRowContext(ctx, a.db.Rebind(q), append(args, tenant)...).Scan(sc.dest()...); err != nil {
		return Scope{}, fmt.Errorf("erasure scope: %w", err)
	}
	return sc.scope(), nil
}

// scopeRow scans the four counts of a scope.
type scopeRow struct{ affected, attachments, sender, recipient int64 }

func (r *scopeRow) dest() []any { return []any{&r.affected, &r.attachments, &r.sender, &r.recipient} }

func (r *scopeRow) scope() Scope {
	return Scope{AsSender: int(r.sender), AsRecipient: int(r.recipient), Attachments: int(r.attachments), Affected: int(r.affected)}
}

// BlockingHolds returns the active holds of tenant that cover at least one visible message
// an erasure of addrs would affect, ordered by id, and a sentence naming them ("" when
// there are none). It finds the affected messages once and tests each active hold's
// addresses against them (coveringHolds).
func (a *Archive) BlockingHolds(ctx context.Context, tenant string, addrs []string) ([]Hold, string, error) {
	addrs = normalize(addrs)
	if len(addrs) == 0 {
		return nil, "", nil
	}
	with, args := a.affectedCTE(tenant, addrs)
	rows, err := a.db.QueryContext(ctx, a.db.Rebind(with+` `+coveringHolds+` ORDER BY id`), append(args, tenant)...)
	if err != nil {
		return nil, "", fmt.Errorf("blocking holds: %w", err)
	}
	defer rows.Close()
	var holds []Hold
	for rows.Next() {
		var h Hold
		if err := rows.Scan(&h.ID, &h.Type, &h.Value); err != nil {
			return nil, "", err
		}
		holds = append(holds, h)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	return holds, holdReason(holds), nil
}

// Assess is Scope and BlockingHolds in one statement, which finds the affected messages
// once for both: what an assessment needs, in about three quarters of the time of the
// two calls (docs/performance.md, "Erasure").
func (a *Archive) Assess(ctx context.Context, tenant string, addrs []string) (Scope, []Hold, string, error) {
	addrs = normalize(addrs)
	if len(addrs) == 0 {
		return Scope{}, nil, "", nil
	}
	with, args := a.affectedCTE(tenant, addrs)
	q := with + `, hs AS (` + coveringHolds + `)
		SELECT c.n, c.att, c.s, c.r, hs.id, hs.type, hs.value FROM (SELECT COUNT(*) AS n, COALESCE(SUM(am.attachments), 0) AS att,
			COALESCE(SUM(am.s), 0) AS s, COALESCE(SUM(am.r), 0) AS r FROM am) c LEFT JOIN hs ON 1 = 1 ORDER BY hs.id`
	rows, err := a.db.QueryContext(ctx, a.db.Rebind(q), append(args, tenant)...)
	if err != nil {
		return Scope{}, nil, "", fmt.Errorf("assess erasure: %w", err)
	}
	defer rows.Close()
	var sc scopeRow
	var holds []Hold
	for rows.Next() {
		var id, typ, value sql.NullString
		if err := rows.Scan(append(sc.dest(), &id, &typ, &value)...); err != nil {
			return Scope{}, nil, "", err
		}
		if id.Valid {
			holds = append(holds, Hold{ID: id.String, Type: typ.String, Value: value.String})
		}
	}
	if err := rows.Err(); err != nil {
		return Scope{}, nil, "", err
	}
	return sc.scope(), holds, holdReason(holds), nil
}

func holdReason(holds []Hold) string {
	if len(holds) == 0 {
		return ""
	}
	parts := make([]string, len(holds))
	for i, h := range holds {
		parts[i] = fmt.Sprintf("%s (%s hold on %s)", h.ID, h.Type, h.Value)
	}
	noun := "an active legal hold covers"
	if len(holds) > 1 {
		noun = fmt.Sprintf("%d active legal holds cover", len(holds))
	}
	return noun + " affected emails: " + strings.Join(parts, ", ")
}

// EraseRequest describes one execution of an erasure request.
type EraseRequest struct {
	Tenant    string
	RequestID string // recorded in metadata.erased_by
	Addresses []string
	// Today is any time of the execution day; erased messages are retained until the start
	// of that UTC day, so the next purge removes their files.
	Today time.Time
	// Batch is how many messages one transaction marks; DefaultEraseBatch when 0.
	Batch int
	// Lock, when set, runs first in every transaction (see LockFunc).
	Lock LockFunc
	// DatedBefore, when set, keeps the scope to messages dated before it (a re-applied
	// erasure: the mail its execution saw, not mail the subject sent later).
	DatedBefore time.Time
}

// ErrBadErasure means an EraseRequest lacks its tenant, request id or addresses.
var ErrBadErasure = errors.New("bad erasure")

// erasePageBatches is how many batches' worth of ids Erase reads from the scope at a time.
const erasePageBatches = 20

// Erase marks every visible message of the request's scope as erased: retained set to
// the start of the execution day, erased_by set to the request id, and its full-text entry
// removed, from then on invisible to every read. It reads the ids of the scope in pages
// (in id order, each page after the last) and marks them in batches, one transaction
// each, so a crash loses at most the batch in flight and a new call resumes where the
// last one stopped. A message that an active legal hold covers is never touched: every
// batch checks its messages again, visible and unheld, inside its transaction. It returns
// how many messages carry this request's mark at the end, those of earlier interrupted
// calls included.
func (a *Archive) Erase(ctx context.Context, r EraseRequest) (int, error) {
	addrs := normalize(r.Addresses)
	if r.Tenant == "" || r.RequestID == "" || len(addrs) == 0 {
		return 0, fmt.Errorf("%w: tenant, request id and addresses are required", ErrBadErasure)
	}
	r.Addresses = addrs
	if r.Batch <= 0 {
		r.Batch = DefaultEraseBatch
	}
	day := r.Today.UTC().Truncate(24 * time.Hour)
	for after := int64(0); ; {
		ids, err := a.scopePage(ctx, r, after, r.Batch*erasePageBatches)
		if err != nil {
			return 0, err
		}
		for start := 0; start < len(ids); start += r.Batch {
			if err := a.eraseBatch(ctx, r, ids[start:min(start+r.Batch, len(ids))], day); err != nil {
				return 0, err
			}
		}
		if len(ids) < r.Batch*erasePageBatches {
			break
		}
		after = ids[len(ids)-1]
	}
	return a.ErasedCount(ctx, r.Tenant, r.RequestID)
}

// scopePage returns the ids of up to limit visible messages in the request's scope with
// an id above after, in id order. It takes no lock: the batches check every id again.
func (a *Archive) scopePage(ctx context.Context, r EraseRequest, after int64, limit int) ([]int64, error) {
	dated, datedArgs := "", []any{}
	if !r.DatedBefore.IsZero() {
		dated, datedArgs = ` AND m.msgdate < ?`, []any{database.TimeArg(a.db.Dialect, r.DatedBefore)}
	}
	q := `SELECT m.id FROM (SELECT DISTINCT id FROM address_role WHERE addr IN (` + database.InList(len(r.Addresses)) + `) AND id > ?) a` +
		joinMetadata(a.db.Dialect) + `WHERE m.tenant_id = ? AND ` + visible + dated + ` ORDER BY m.id LIMIT ?`
	args := append(append(append(stringArgs(r.Addresses), after, r.Tenant), datedArgs...), limit)
	rows, err := a.db.QueryContext(ctx, a.db.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("erasure scope ids: %w", err)
	}
	return scanIDs(rows)
}

// eraseBatch marks, in one transaction, those of ids that are still visible and not
// under an active hold.
func (a *Archive) eraseBatch(ctx context.Context, r EraseRequest, ids []int64, day time.Time) error {
	return a.db.InTx(ctx, func(tx *database.Tx) error {
		if r.Lock != nil {
			if err := r.Lock(ctx, tx); err != nil {
				return err
			}
		}
		q := `SELECT m.id FROM metadata m WHERE m.id IN (` + database.InList(len(ids)) + `) AND m.tenant_id = ? AND ` + visible +
			` AND NOT ` + underActiveHold + ` ORDER BY m.id`
		erasable, err := queryIDs(ctx, tx, q, append(int64Args(ids), r.Tenant)...)
		if err != nil || len(erasable) == 0 {
			return err
		}
		return a.markErased(ctx, tx, erasable, r.RequestID, day)
	})
}

func (a *Archive) markErased(ctx context.Context, tx *database.Tx, ids []int64, requestID string, day time.Time) error {
	q := `UPDATE metadata SET retained = ?, erased_by = ? WHERE erased_by IS NULL AND id IN (` + database.InList(len(ids)) + `)`
	args := append([]any{database.TimeArg(tx.Dialect, day), requestID}, int64Args(ids)...)
	if _, err := tx.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("mark erased: %w", err)
	}
	if err := a.index.remove(ctx, tx, ids); err != nil {
		return fmt.Errorf("remove erased messages from the index: %w", err)
	}
	return nil
}

// ErasedCount returns how many messages of tenant carry the erasure mark of requestID,
// purged ones included.
func (a *Archive) ErasedCount(ctx context.Context, tenant, requestID string) (int, error) {
	var n int
	err := a.db.QueryRowContext(ctx, a.db.Rebind(`SELECT COUNT(*) FROM metadata WHERE erased_by = ? AND tenant_id = ?`), requestID, tenant).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count erased: %w", err)
	}
	return n, nil
}

func queryIDs(ctx context.Context, tx *database.Tx, q string, args ...any) ([]int64, error) {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}

// scanIDs reads a column of ids and closes rows.
func scanIDs(rows *sql.Rows) ([]int64, error) {
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func stringArgs(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
