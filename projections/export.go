package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/eventstore"
)

// MaxExportItemsPerEvent bounds the items of one export.items_processed event: an item's
// row id is the event's position × MaxExportItemsPerEvent + its index in the event.
const MaxExportItemsPerEvent = 1000

// itemRowsPerInsert is how many item rows one INSERT writes.
const itemRowsPerInsert = 100

// Export projects the eDiscovery tables from the export_job streams:
//   - ediscovery_exports: one row per job, its id the position of the job's first event;
//     deleted with its items when the job is deleted;
//   - ediscovery_export_items: one row per processed email (id: see MaxExportItemsPerEvent);
//   - ediscovery_download_log: one row per download, its id the event's position, kept
//     indefinitely (the job's deletion leaves it);
//   - ediscovery_bates_sequences: per prefix, the highest number ever reserved;
//   - ediscovery_bates_ranges: every reserved range, kept forever (numbers stay consumed);
//   - ediscovery_active_exports: one row per running job.
//
// Every value comes from the events, so a rebuild gives the same rows.
type Export struct{}

var _ eventstore.Projector = Export{}

// Name implements eventstore.Projector.
func (Export) Name() string { return "ediscovery_exports" }

// Tables implements eventstore.Projector.
func (Export) Tables() []string {
	return []string{"ediscovery_exports", "ediscovery_export_items", "ediscovery_download_log",
		"ediscovery_bates_sequences", "ediscovery_bates_ranges", "ediscovery_active_exports"}
}

// ExportOutputPath is the output_path of a job: its directory relative to DIR_EXPORT.
func ExportOutputPath(tenant, jobID string) string { return tenant + "/ediscovery/" + jobID }

// Project implements eventstore.Projector.
func (Export) Project(ctx context.Context, tx *database.Tx, rec *eventstore.Record) error {
	if rec.StreamType != export.StreamType {
		return nil
	}
	e, err := export.Decode(rec.EventType, rec.Data)
	if err != nil {
		return err
	}
	if err := projectExport(ctx, tx, rec, e); err != nil {
		return fmt.Errorf("ediscovery %s at position %d: %w", rec.EventType, rec.Position, err)
	}
	return nil
}

func projectExport(ctx context.Context, tx *database.Tx, rec *eventstore.Record, e domain.Event) error {
	at := database.TimeArg(tx.Dialect, rec.RecordedAt)
	switch ev := e.(type) {
	case *export.Created:
		return insertExport(ctx, tx, rec, ev)
	case *export.Started:
		if err := setExport(ctx, tx, ev.JobID, `status = ?, started_at = ?`, export.StatusRunning, at); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO ediscovery_active_exports (id, tenant_id, job_id, started_at) VALUES (?, ?, ?, ?)`,
			rec.Position, rec.TenantID, ev.JobID, at)
		return err
	case *export.ItemsProcessed:
		return insertItems(ctx, tx, rec, ev)
	case *export.Completed:
		return finishExport(ctx, tx, ev.JobID, `status = ?, bates_end = ?, output_size = ?, manifest_hash = ?, completed_at = ?`,
			export.StatusCompleted, nullableInt(ev.BatesEnd), ev.OutputSize, nullable(ev.ManifestHash), at)
	case *export.FailedEvent:
		return finishExport(ctx, tx, ev.JobID, `status = ?, error_message = ?, completed_at = ?`, export.StatusFailed, ev.ErrorMessage, at)
	case *export.Cancelled:
		return finishExport(ctx, tx, ev.JobID, `status = ?, completed_at = ?`, export.StatusCancelled, at)
	case *export.Deleted:
		return deleteExport(ctx, tx, ev.JobID)
	case *export.Downloaded:
		_, err := tx.Exec(ctx, `INSERT INTO ediscovery_download_log (id, job_id, tenant_id, downloaded_by, downloaded_at, ip_address, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			rec.Position, ev.JobID, rec.TenantID, database.Clip(ev.DownloadedBy, 255), at, nullable(database.Clip(ev.IPAddress, 45)), nullable(ev.UserAgent))
		return err
	}
	return nil
}

func insertExport(ctx context.Context, tx *database.Tx, rec *eventstore.Record, ev *export.Created) error {
	cfg, err := json.Marshal(ev.Config)
	if err != nil {
		return err
	}
	at := database.TimeArg(tx.Dialect, rec.RecordedAt)
	_, err = tx.Exec(ctx, `INSERT INTO ediscovery_exports (id, job_id, tenant_id, status, bates_prefix, bates_start, total_emails, config_json, output_path, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		rec.Position, ev.JobID, ev.TenantID, export.StatusPending, ev.Config.BatesPrefix, ev.Reserved.Start,
		len(ev.Config.EmailIDs), string(cfg), ExportOutputPath(ev.TenantID, ev.JobID), database.Clip(ev.CreatedBy, 255), at)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO ediscovery_bates_ranges (id, prefix, range_start, range_end, job_id, tenant_id) VALUES (?, ?, ?, ?, ?, ?)`,
		rec.Position, ev.Config.BatesPrefix, ev.Reserved.Start, ev.Reserved.End, ev.JobID, ev.TenantID)
	if err != nil {
		return err
	}
	return raiseBatesSequence(ctx, tx, rec.Position, ev.Config.BatesPrefix, ev.Reserved.End, at)
}

// raiseBatesSequence makes the prefix's last_number at least end, and dates the change.
func raiseBatesSequence(ctx context.Context, tx *database.Tx, position int64, prefix string, end int64, at any) error {
	q := `INSERT INTO ediscovery_bates_sequences (id, prefix, last_number, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (prefix) DO UPDATE SET last_number = CASE WHEN excluded.last_number > ediscovery_bates_sequences.last_number THEN excluded.last_number ELSE ediscovery_bates_sequences.last_number END, updated_at = excluded.updated_at`
	if tx.Dialect == database.MySQL {
		q = `INSERT INTO ediscovery_bates_sequences (id, prefix, last_number, updated_at) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE last_number = GREATEST(last_number, VALUES(last_number)), updated_at = VALUES(updated_at)`
	}
	_, err := tx.Exec(ctx, q, position, prefix, end, at)
	return err
}

func setExport(ctx context.Context, tx *database.Tx, jobID, set string, args ...any) error {
	res, err := tx.Exec(ctx, `UPDATE ediscovery_exports SET `+set+` WHERE job_id = ?`, append(args, jobID)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("export %s has no row", jobID)
	}
	return nil
}

// finishExport records the end of a job and frees its slot.
func finishExport(ctx context.Context, tx *database.Tx, jobID, set string, args ...any) error {
	if err := setExport(ctx, tx, jobID, set, args...); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM ediscovery_active_exports WHERE job_id = ?`, jobID)
	return err
}

func deleteExport(ctx context.Context, tx *database.Tx, jobID string) error {
	for _, table := range []string{"ediscovery_export_items", "ediscovery_active_exports", "ediscovery_exports"} {
		if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE job_id = ?`, jobID); err != nil {
			return err
		}
	}
	return nil
}

// insertItems writes the batch's item rows and adds them to the job's counters.
func insertItems(ctx context.Context, tx *database.Tx, rec *eventstore.Record, ev *export.ItemsProcessed) error {
	if len(ev.Items) > MaxExportItemsPerEvent {
		return fmt.Errorf("%d items in one event; at most %d", len(ev.Items), MaxExportItemsPerEvent)
	}
	at := database.TimeArg(tx.Dialect, rec.RecordedAt)
	failed := 0
	for start := 0; start < len(ev.Items); start += itemRowsPerInsert {
		chunk := ev.Items[start:min(start+itemRowsPerInsert, len(ev.Items))]
		args := make([]any, 0, len(chunk)*7)
		for i, it := range chunk {
			id := rec.Position*MaxExportItemsPerEvent + int64(start+i)
			args = append(args, id, ev.JobID, it.EmailID, nullable(it.BatesNumber), it.Status, nullable(it.ErrorMessage), at)
		}
		q := `INSERT INTO ediscovery_export_items (id, job_id, email_id, bates_number, status, error_message, processed_at) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?),", len(chunk)), ",")
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	for _, it := range ev.Items {
		if it.Status == export.ItemFailed {
			failed++
		}
	}
	return setExport(ctx, tx, ev.JobID, `processed = processed + ?, failed = failed + ?`, len(ev.Items), failed)
}

// nullableInt maps 0 to SQL NULL.
func nullableInt(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}
