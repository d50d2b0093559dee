package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"

	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/domain/fault"
	"github.com/mailledger/mailledger/production"
)

// ErrProductionMissing means a completed job's directory is gone from DIR_EXPORT.
var ErrProductionMissing = fault.New(fault.Gone, "export files are missing")

// ExportDownload is a download that was checked and recorded; Stream writes it.
type ExportDownload struct {
	// FileName is the ZIP's file name for Content-Disposition.
	FileName string
	root     string // DIR_EXPORT
	tenant   string
	jobID    string
}

// ContentType is the download's media type.
func (d *ExportDownload) ContentType() string { return "application/zip" }

// ContentDisposition is the Content-Disposition header value of the download.
func (d *ExportDownload) ContentDisposition() string {
	return mime.FormatMediaType("attachment", map[string]string{"filename": d.FileName})
}

// Stream writes the ZIP of the job directory straight to w (no temporary copy) and
// returns the bytes written.
func (d *ExportDownload) Stream(ctx context.Context, w io.Writer) (int64, error) {
	return production.WriteZip(ctx, d.root, d.tenant, d.jobID, w)
}

// ExportFileName is the download file name of a job: ediscovery-<prefix>-<job id>.zip.
// Both parts are checked names, so the value needs no escaping.
func ExportFileName(prefix, jobID string) string {
	return "ediscovery-" + prefix + "-" + jobID + ".zip"
}

// OpenDownload checks that a job of tenant (AllTenants for an administrator) is
// completed (else export.ErrNotReady) and its files are there, and records the download
// (md's actor, client IP and user agent) in the ledger and the download log, before a
// byte is sent. Concurrent downloads of one job are all recorded, none refused: the
// record is appended under the ledger-head lock. Call Stream next.
func (x *Exports) OpenDownload(ctx context.Context, tenant, jobID string, md domain.Metadata) (*ExportDownload, error) {
	j, err := x.load(ctx, tenant, jobID)
	if err != nil {
		return nil, err
	}
	if j.Status != export.StatusCompleted {
		return nil, fmt.Errorf("%w: export %s is %s", export.ErrNotReady, jobID, j.Status)
	}
	if err := production.Check(x.cfg.Dir, j.TenantID, j.JobID); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, production.ErrLinkRefused) {
			return nil, fmt.Errorf("%w: export %s: %w", ErrProductionMissing, jobID, err)
		}
		return nil, err
	}
	_, err = x.decideLocked(ctx, tenant, jobID, md, func(j *export.Job) (domain.Event, error) {
		return j.Download(md.Actor, md.ClientIP, md.UserAgent)
	})
	if err != nil {
		return nil, err
	}
	return &ExportDownload{FileName: ExportFileName(j.Config.BatesPrefix, j.JobID), root: x.cfg.Dir, tenant: j.TenantID, jobID: j.JobID}, nil
}

// Download is OpenDownload then Stream to w. Errors before the first byte leave w
// untouched.
func (x *Exports) Download(ctx context.Context, tenant, jobID string, md domain.Metadata, w io.Writer) error {
	d, err := x.OpenDownload(ctx, tenant, jobID, md)
	if err != nil {
		return err
	}
	_, err = d.Stream(ctx, w)
	return err
}
