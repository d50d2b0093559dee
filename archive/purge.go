package archive

import (
	"context"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/database"
)

// DefaultPurgeBatch is how many messages one purge transaction removes.
const DefaultPurgeBatch = 500

// PurgeOptions configure a purge pass.
type PurgeOptions struct {
	// Batch is how many messages one transaction removes; DefaultPurgeBatch when 0.
	Batch int
	// Lock, when set, runs first in every transaction (see LockFunc).
	Lock LockFunc
	// OnBatch, when set, runs at the end of every transaction that purged messages, with
	// the number purged per tenant in it; an error rolls the batch back. The application
	// uses it to record the purge in the ledger atomically with the deletions.
	OnBatch func(ctx context.Context, tx *database.Tx, purged map[string]int) error
	// Exempt are tenants whose retention never ends (a customer with enable_purge 0):
	// their mail is not purged when its retention passes. Erased mail is purged anyway:
	// an erasure's files go at the next purge, whatever the tenant's setting.
	Exempt []string
}

// PurgeResult counts what a purge pass did.
type PurgeResult struct {
	Purged   int            // messages whose files were deleted in this pass
	ByTenant map[string]int // Purged per tenant
	HeldBack int            // messages past retention that an active legal hold keeps
}

// Purge deletes the messages retained until before now: their files are deleted, their
// full-text entries removed and their metadata marked deleted, in batches of one
// transaction each. A message that an active legal hold covers is kept, checked again in
// every transaction. Files are deleted before the transaction commits, so a crash may
// leave a row whose file is already gone; the next pass finishes it (deleting a missing
// file is not an error). Purge is idempotent: a second pass finds nothing to do.
func (a *Archive) Purge(ctx context.Context, now time.Time, opts PurgeOptions) (PurgeResult, error) {
	if opts.Batch <= 0 {
		opts.Batch = DefaultPurgeBatch
	}
	res := PurgeResult{ByTenant: map[string]int{}}
	cutoff := database.TimeArg(a.db.Dialect, now)
	for {
		n, err := a.purgeBatch(ctx, cutoff, opts, res.ByTenant)
		if err != nil {
			return res, err
		}
		res.Purged += n
		if n < opts.Batch {
			break
		}
	}
	exempt, exemptArgs := exemptCondition(opts.Exempt)
	q := `SELECT COUNT(*) FROM metadata m WHERE m.retained < ? AND m.deleted = 0` + exempt
	if err := a.db.QueryRowContext(ctx, a.db.Rebind(q), append([]any{cutoff}, exemptArgs...)...).Scan(&res.HeldBack); err != nil {
		return res, fmt.Errorf("count held messages: %w", err)
	}
	return res, nil
}

type purgeCandidate struct {
	id     int64
	tenant string
}

// purgeBatch purges up to opts.Batch messages in one transaction and adds them to
// byTenant once it committed.
func (a *Archive) purgeBatch(ctx context.Context, cutoff any, opts PurgeOptions, byTenant map[string]int) (int, error) {
	counts := map[string]int{}
	var n int
	err := a.db.InTx(ctx, func(tx *database.Tx) error {
		if opts.Lock != nil {
			if err := opts.Lock(ctx, tx); err != nil {
				return err
			}
		}
		batch, err := purgeCandidates(ctx, tx, cutoff, opts.Batch, opts.Exempt)
		if err != nil || len(batch) == 0 {
			return err
		}
		if err := a.purgeMessages(ctx, tx, batch); err != nil {
			return err
		}
		n = len(batch)
		for _, c := range batch {
			counts[c.tenant]++
		}
		if opts.OnBatch != nil {
			return opts.OnBatch(ctx, tx, counts)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for t, c := range counts {
		byTenant[t] += c
	}
	return n, nil
}

func purgeCandidates(ctx context.Context, tx *database.Tx, cutoff any, limit int, exemptTenants []string) ([]purgeCandidate, error) {
	exempt, exemptArgs := exemptCondition(exemptTenants)
	q := `SELECT m.id, m.tenant_id FROM metadata m WHERE m.retained < ? AND m.deleted = 0 AND NOT ` +
		underActiveHold + exempt + ` ORDER BY m.id LIMIT ?`
	args := append(append([]any{cutoff}, exemptArgs...), limit)
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("purge candidates: %w", err)
	}
	defer rows.Close()
	var out []purgeCandidate
	for rows.Next() {
		var c purgeCandidate
		if err := rows.Scan(&c.id, &c.tenant); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// purgeMessages deletes the files, index entries and (but of erased messages) address
// roles of batch and marks its rows deleted.
func (a *Archive) purgeMessages(ctx context.Context, tx *database.Tx, batch []purgeCandidate) error {
	ids := make([]int64, len(batch))
	for i, c := range batch {
		if err := a.blobs.Delete(ctx, MessageKey(c.tenant, c.id)); err != nil {
			return fmt.Errorf("delete file of message %d: %w", c.id, err)
		}
		ids[i] = c.id
	}
	if err := a.index.remove(ctx, tx, ids); err != nil {
		return fmt.Errorf("remove purged messages from the index: %w", err)
	}
	// The address roles go with the message, but an erased one's: its file may come back
	// from a backup (ReturnedFiles), and a legal hold must still find it then. A search
	// by address counts its matches from what is left (addressTotal).
	if err := removeIDs(ctx, tx, `DELETE FROM address_role WHERE id IN (SELECT id FROM metadata WHERE erased_by IS NULL AND id IN `, ids, `)`); err != nil {
		return fmt.Errorf("remove purged messages' address roles: %w", err)
	}
	q := `UPDATE metadata SET deleted = 1 WHERE id IN (` + database.InList(len(ids)) + `)`
	if _, err := tx.Exec(ctx, q, int64Args(ids)...); err != nil {
		return fmt.Errorf("mark deleted: %w", err)
	}
	return nil
}

// exemptCondition keeps the mail of tenants out of a purge, but their erased mail.
func exemptCondition(tenants []string) (string, []any) {
	if len(tenants) == 0 {
		return "", nil
	}
	args := make([]any, len(tenants))
	for i, t := range tenants {
		args[i] = t
	}
	return ` AND (m.erased_by IS NOT NULL OR m.tenant_id NOT IN (` + database.InList(len(tenants)) + `))`, args
}
