package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain/export"
)

// BatesContinuation says where a new export of a prefix would start its Bates numbers
// when it gives no bates_start_number.
type BatesContinuation struct {
	Prefix string
	// Used reports that the tenant's own exports have used the prefix; only then is Next
	// known to the tenant.
	Used bool
	// LastNumber is the highest number ever issued for the prefix, in any tenant (as the
	// Bates prefix list shows it); 0 when Used is false.
	LastNumber int64
	// Next is LastNumber+1, the number a new export continues from; 0 when Used is false
	// (the export then continues after the highest number issued for the prefix in any
	// tenant, 1 when there is none, and the tenant learns the number from the export).
	Next int64
}

// NextBates returns where a new export of tenant (AllTenants: any) with prefix would
// continue its Bates numbers, by the rule Create applies (after the highest number ever
// issued for the prefix, in any tenant). A tenant learns it only for a prefix its own
// exports used, as the Bates prefix list shows; an invalid prefix is a
// *domain.ValidationError.
func (x *Exports) NextBates(ctx context.Context, tenant, prefix string) (*BatesContinuation, error) {
	if err := export.CheckPrefix(prefix); err != nil {
		return nil, err
	}
	q, args := `SELECT last_number FROM ediscovery_bates_sequences WHERE prefix = ?`, []any{prefix}
	if tenant != AllTenants {
		q, args = q+` AND prefix IN (SELECT prefix FROM ediscovery_bates_ranges WHERE tenant_id = ?)`, append(args, tenant)
	}
	db := x.store.DB()
	out := &BatesContinuation{Prefix: prefix}
	err := db.QueryRowContext(ctx, db.Rebind(q), args...).Scan(&out.LastNumber)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("read bates continuation: %w", err)
	}
	out.Used, out.Next = true, out.LastNumber+1
	return out, nil
}

// DownloadRecord is one row of an export's download log.
type DownloadRecord struct {
	ID           int64
	JobID        string
	DownloadedBy string
	DownloadedAt time.Time
	IPAddress    *string
	UserAgent    *string
}

// DownloadLog returns the downloads of one job of tenant (AllTenants for an
// administrator), oldest first; ErrNotFound when the job does not exist there or was
// deleted.
func (x *Exports) DownloadLog(ctx context.Context, tenant, jobID string) ([]DownloadRecord, error) {
	if _, err := x.Get(ctx, tenant, jobID); err != nil {
		return nil, err
	}
	return queryRows(ctx, x.store.DB(), "download log", scanDownload,
		`SELECT id, job_id, downloaded_by, downloaded_at, ip_address, user_agent FROM ediscovery_download_log WHERE job_id = ? ORDER BY id`, jobID)
}

func scanDownload(rows *sql.Rows) (DownloadRecord, error) {
	var d DownloadRecord
	var at any
	if err := rows.Scan(&d.ID, &d.JobID, &d.DownloadedBy, &at, &d.IPAddress, &d.UserAgent); err != nil {
		return d, fmt.Errorf("scan download: %w", err)
	}
	var err error
	d.DownloadedAt, err = database.TimeValue(at)
	return d, err
}

// ItemProblem is an email of an export that was not produced: failed or skipped.
type ItemProblem struct {
	EmailID      int64
	Status       string
	ErrorMessage *string
}

// MaxItemProblems bounds the problems ItemProblems returns.
const MaxItemProblems = 100

// ItemProblems returns up to MaxItemProblems emails of one job of tenant (AllTenants for
// an administrator) that failed or were skipped, by email id; ErrNotFound when the job
// does not exist there or was deleted.
func (x *Exports) ItemProblems(ctx context.Context, tenant, jobID string) ([]ItemProblem, error) {
	if _, err := x.Get(ctx, tenant, jobID); err != nil {
		return nil, err
	}
	return queryRows(ctx, x.store.DB(), "export items", scanItemProblem,
		`SELECT email_id, status, error_message FROM ediscovery_export_items WHERE job_id = ? AND status <> ? ORDER BY email_id LIMIT ?`,
		jobID, export.ItemSuccess, MaxItemProblems)
}

func scanItemProblem(rows *sql.Rows) (ItemProblem, error) {
	var p ItemProblem
	if err := rows.Scan(&p.EmailID, &p.Status, &p.ErrorMessage); err != nil {
		return p, fmt.Errorf("scan export item: %w", err)
	}
	return p, nil
}
