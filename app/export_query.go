package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain/export"
)

// ExportView is an export job as the API shows it (docs/api.md): the columns of
// ediscovery_exports, with unset values nil, the configuration object in place of
// config_json, and progress (0..1).
type ExportView struct {
	ID           int64         `json:"id"`
	JobID        string        `json:"job_id"`
	TenantID     string        `json:"tenant_id"`
	Status       string        `json:"status"`
	BatesPrefix  string        `json:"bates_prefix"`
	BatesStart   int64         `json:"bates_start"`
	BatesEnd     *int64        `json:"bates_end"`
	TotalEmails  int           `json:"total_emails"`
	Processed    int           `json:"processed"`
	Failed       int           `json:"failed"`
	Config       export.Config `json:"config"`
	OutputPath   string        `json:"output_path"`
	OutputSize   *int64        `json:"output_size"`
	ErrorMessage *string       `json:"error_message"`
	CreatedBy    string        `json:"created_by"`
	CreatedAt    time.Time     `json:"created_at"`
	StartedAt    *time.Time    `json:"started_at"`
	CompletedAt  *time.Time    `json:"completed_at"`
	// ManifestHash is the SHA-256 over every produced file (production.Manifest), set on
	// completion and recorded in the ledger.
	ManifestHash *string `json:"manifest_hash"`
	Progress     float64 `json:"progress"`
}

// ExportList is the body of the export lists.
type ExportList struct {
	Exports []ExportView `json:"exports"`
}

// BatesPrefix is one row of ediscovery_bates_sequences.
type BatesPrefix struct {
	Prefix     string    `json:"prefix"`
	LastNumber int64     `json:"last_number"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// BatesPrefixList is the body of the Bates prefix lists.
type BatesPrefixList struct {
	Prefixes []BatesPrefix `json:"prefixes"`
}

const exportColumns = `id, job_id, tenant_id, status, bates_prefix, bates_start, bates_end, total_emails, processed, failed, config_json, output_path, output_size, error_message, created_by, created_at, started_at, completed_at, manifest_hash`

// Get returns one job of tenant (AllTenants for an administrator); ErrNotFound when it
// does not exist there or was deleted.
func (x *Exports) Get(ctx context.Context, tenant, jobID string) (*ExportView, error) {
	q, args := `SELECT `+exportColumns+` FROM ediscovery_exports WHERE job_id = ?`, []any{jobID}
	if tenant != AllTenants {
		q, args = q+` AND tenant_id = ?`, append(args, tenant)
	}
	views, err := x.queryExports(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	if len(views) == 0 {
		return nil, fmt.Errorf("%w: export %s", ErrNotFound, jobID)
	}
	return &views[0], nil
}

// List returns the jobs of tenant (AllTenants: every tenant's), newest first.
func (x *Exports) List(ctx context.Context, tenant string) (*ExportList, error) {
	q, args := `SELECT `+exportColumns+` FROM ediscovery_exports`, []any{}
	if tenant != AllTenants {
		q, args = q+` WHERE tenant_id = ?`, append(args, tenant)
	}
	views, err := x.queryExports(ctx, q+` ORDER BY id DESC`, args...)
	if err != nil {
		return nil, err
	}
	return &ExportList{Exports: views}, nil
}

func (x *Exports) queryExports(ctx context.Context, q string, args ...any) ([]ExportView, error) {
	return queryRows(ctx, x.store.DB(), "exports", scanExport, q, args...)
}

func scanExport(rows *sql.Rows) (ExportView, error) {
	var v ExportView
	var cfg string
	var created, started, completed any
	err := rows.Scan(&v.ID, &v.JobID, &v.TenantID, &v.Status, &v.BatesPrefix, &v.BatesStart, &v.BatesEnd, &v.TotalEmails,
		&v.Processed, &v.Failed, &cfg, &v.OutputPath, &v.OutputSize, &v.ErrorMessage, &v.CreatedBy, &created, &started, &completed, &v.ManifestHash)
	if err != nil {
		return v, fmt.Errorf("scan export: %w", err)
	}
	if err := json.Unmarshal([]byte(cfg), &v.Config); err != nil {
		return v, fmt.Errorf("export %s config: %w", v.JobID, err)
	}
	if v.CreatedAt, err = database.TimeValue(created); err != nil {
		return v, err
	}
	if v.StartedAt, err = optionalTime(started); err != nil {
		return v, err
	}
	if v.CompletedAt, err = optionalTime(completed); err != nil {
		return v, err
	}
	v.Progress = progressOf(v)
	return v, nil
}

func progressOf(v ExportView) float64 {
	if v.Status == export.StatusCompleted {
		return 1
	}
	if v.TotalEmails == 0 {
		return 0
	}
	return min(1, float64(v.Processed)/float64(v.TotalEmails))
}

func optionalTime(v any) (*time.Time, error) {
	if v == nil {
		return nil, nil
	}
	t, err := database.TimeValue(v)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// BatesPrefixes returns the Bates prefix sequences that tenant's jobs used (AllTenants:
// every prefix), ordered by prefix. last_number is the prefix's highest number in any
// tenant, since numbers are never issued twice across tenants.
func (x *Exports) BatesPrefixes(ctx context.Context, tenant string) (*BatesPrefixList, error) {
	q, args := `SELECT prefix, last_number, updated_at FROM ediscovery_bates_sequences`, []any{}
	if tenant != AllTenants {
		q, args = q+` WHERE prefix IN (SELECT prefix FROM ediscovery_bates_ranges WHERE tenant_id = ?)`, append(args, tenant)
	}
	db := x.store.DB()
	rows, err := db.QueryContext(ctx, db.Rebind(q+` ORDER BY prefix`), args...)
	if err != nil {
		return nil, fmt.Errorf("read bates prefixes: %w", err)
	}
	defer rows.Close()
	out := &BatesPrefixList{Prefixes: []BatesPrefix{}}
	for rows.Next() {
		var p BatesPrefix
		var at any
		if err := rows.Scan(&p.Prefix, &p.LastNumber, &at); err != nil {
			return nil, err
		}
		if p.UpdatedAt, err = database.TimeValue(at); err != nil {
			return nil, err
		}
		out.Prefixes = append(out.Prefixes, p)
	}
	return out, rows.Err()
}
