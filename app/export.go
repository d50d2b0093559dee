package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/production"
	"github.com/mailledger/mailledger/projections"
)

// ExportArchive is what the exports need of the archive: one message read for a
// production, parsed (ReadDocument) or, for natives only, not (ReadNative).
// *archive.Archive implements it.
type ExportArchive interface {
	ReadDocument(ctx context.Context, tenant string, id int64) (*archive.Document, error)
	ReadNative(ctx context.Context, tenant string, id int64) (*archive.Document, error)
	Sizes(ctx context.Context, tenant string, ids []int64) (map[int64]int64, error)
}

var _ ExportArchive = (*archive.Archive)(nil)

// Exports runs the eDiscovery exports: the commands and queries of the auditor and admin
// APIs (create, get, list, cancel, delete, download, Bates prefixes), the admission of
// pending jobs within the concurrency limits, and the runs themselves. Jobs run only
// while Run is running; Register adds the consumer that admits jobs when slots free.
type Exports struct {
	store *eventstore.Store
	jobs  *repository[export.Job, *export.Job]
	arc   ExportArchive
	cfg   ExportsConfig

	// memory is the byte budget of every running job's emails in memory at once
	// (MaxInFlightBytes of originals), shared with the message reads (ExportsConfig.Budget).
	memory *MemoryBudget

	mu      sync.Mutex
	runCtx  context.Context // set while Run runs, once interrupted jobs are recovered
	runners map[string]*runner
	wg      sync.WaitGroup
}

// runner is one job running in this process.
type runner struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// NewExports returns the export use cases; it rejects nil dependencies and an invalid
// configuration.
func NewExports(store *eventstore.Store, arc ExportArchive, cfg ExportsConfig) (*Exports, error) {
	if store == nil || arc == nil {
		return nil, errors.New("app: exports need a store and an archive")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	memory := cfg.Budget
	if memory == nil {
		memory = NewMemoryBudget(cfg.MaxInFlightBytes)
	}
	jobs := &repository[export.Job, *export.Job]{store: store, noun: "export",
		streamType: export.StreamType, streamID: export.StreamID, decode: export.Decode}
	return &Exports{store: store, jobs: jobs, arc: arc, cfg: cfg, runners: map[string]*runner{}, memory: memory}, nil
}

// InFlightBytes is how many bytes of originals the running jobs (and the message reads
// that share their budget) hold in memory now: the emails read or being read and not yet
// written. It never exceeds the budget's size.
func (x *Exports) InFlightBytes() int64 { return x.memory.InUse() }

// Create records a new pending export job of tenant, configured by req (validated and
// completed with the defaults of docs/api.md; every problem at once in a *domain.ValidationError).
// Its Bates range is reserved in the transaction that appends the job, under the
// ledger-head lock, from the ranges ever issued for the prefix in any tenant: an explicit
// start that overlaps one is export.ErrBatesConflict, and two jobs created at the same
// moment never share a number. The job runs when the concurrency limits allow.
func (x *Exports) Create(ctx context.Context, tenant string, req export.Request, md domain.Metadata) (*ExportView, error) {
	cfg, err := req.Normalize(x.cfg.Workers)
	if err != nil {
		return nil, err
	}
	jobID := uuid.Must(uuid.NewV7()).String()
	if _, err := production.Dir(x.cfg.Dir, tenant, jobID); err != nil {
		return nil, err
	}
	created := &export.Created{JobID: jobID, TenantID: tenant, Config: cfg, CreatedBy: md.Actor}
	var rec eventstore.Record
	err = inLedgerTx(ctx, x.store, func(tx *ledgerTx) error {
		if err := eventstore.LockHead(ctx, tx.Tx); err != nil {
			return err
		}
		issued, err := issuedRanges(ctx, tx.Tx, cfg.BatesPrefix)
		if err != nil {
			return err
		}
		if created.Reserved, err = export.Reserve(issued, cfg.BatesStartNumber, len(cfg.EmailIDs), cfg.BatesDigits); err != nil {
			return err
		}
		recs, err := x.jobs.appendTx(ctx, tx, nil, x.jobs.stream(jobID, tenant), eventstore.NoStream, md, created)
		if err != nil {
			return err
		}
		rec = recs[0]
		return nil
	})
	if err != nil {
		return nil, err
	}
	return createdView(rec, created), nil
}

// createdView is the view of a job as it was created (pending), whatever the scheduler
// did since.
func createdView(rec eventstore.Record, c *export.Created) *ExportView {
	return &ExportView{
		ID: rec.Position, JobID: c.JobID, TenantID: c.TenantID, Status: export.StatusPending,
		BatesPrefix: c.Config.BatesPrefix, BatesStart: c.Reserved.Start, TotalEmails: len(c.Config.EmailIDs),
		Config: c.Config, OutputPath: projections.ExportOutputPath(c.TenantID, c.JobID), CreatedBy: c.CreatedBy,
		CreatedAt: rec.RecordedAt,
	}
}

// issuedRanges reads every range ever reserved for prefix, in any tenant.
func issuedRanges(ctx context.Context, tx *database.Tx, prefix string) ([]export.Range, error) {
	rows, err := tx.Query(ctx, `SELECT range_start, range_end FROM ediscovery_bates_ranges WHERE prefix = ?`, prefix)
	if err != nil {
		return nil, fmt.Errorf("read bates ranges: %w", err)
	}
	defer rows.Close()
	var out []export.Range
	for rows.Next() {
		var r export.Range
		if err := rows.Scan(&r.Start, &r.End); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Cancel cancels a pending or running job of tenant (AllTenants for an administrator).
// A running job's workers stop within a second and its partial output is removed; its
// reserved Bates numbers stay consumed. Other states are domain.ErrInvalidTransition.
func (x *Exports) Cancel(ctx context.Context, tenant, jobID string, md domain.Metadata) (*ExportView, error) {
	_, err := x.decide(ctx, tenant, jobID, md, func(j *export.Job) (domain.Event, error) { return j.Cancel(md.Actor) })
	if err != nil {
		return nil, err
	}
	x.stop(jobID, errCancelled)
	return x.Get(ctx, tenant, jobID)
}

// Delete removes a job of tenant that is not running, and its files; a running job is
// domain.ErrInvalidTransition (cancel it first). The job's Bates numbers stay consumed
// and its download log stays.
func (x *Exports) Delete(ctx context.Context, tenant, jobID string, md domain.Metadata) error {
	j, err := x.decide(ctx, tenant, jobID, md, func(j *export.Job) (domain.Event, error) { return j.Delete(md.Actor) })
	if err != nil {
		return err
	}
	x.wait(jobID) // a cancelled run may still be removing its output
	return production.Remove(x.cfg.Dir, j.TenantID, j.JobID)
}

// decideAttempts bounds the retries of a command that lost a race with the runner's
// progress events.
const decideAttempts = 5

// decide loads a job of tenant, lets fn decide, and appends its event at the version it
// loaded; a race lost to another writer (usually the runner recording progress) is
// retried on the new state.
func (x *Exports) decide(ctx context.Context, tenant, jobID string, md domain.Metadata, fn func(*export.Job) (domain.Event, error)) (*export.Job, error) {
	for attempt := 1; ; attempt++ {
		j, err := x.load(ctx, tenant, jobID)
		if err != nil {
			return nil, err
		}
		ev, err := fn(j)
		if err != nil {
			return nil, err
		}
		err = x.append(ctx, j, ev, md)
		if err == nil || !errors.Is(err, eventstore.ErrConcurrentModification) || attempt == decideAttempts {
			return j, err
		}
	}
}

// append appends ev to j's stream at the version j was loaded at, and applies it to j.
func (x *Exports) append(ctx context.Context, j *export.Job, ev domain.Event, md domain.Metadata) error {
	_, err := x.jobs.append(ctx, j, x.jobs.stream(j.JobID, j.TenantID), j.Version, md, ev)
	return err
}

// decideLocked is decide for a command that many clients send at once (a download):
// it loads the job and appends fn's event in one transaction under the ledger-head lock,
// so no other append comes between, and it never loses a race however many run at once.
// It holds the lock for one read of the job's stream.
func (x *Exports) decideLocked(ctx context.Context, tenant, jobID string, md domain.Metadata, fn func(*export.Job) (domain.Event, error)) (*export.Job, error) {
	var j *export.Job
	err := inLedgerTx(ctx, x.store, func(tx *ledgerTx) error {
		if err := eventstore.LockHead(ctx, tx.Tx); err != nil {
			return err
		}
		var err error
		if j, err = x.jobs.loadTx(ctx, tx, tenant, jobID); err != nil {
			return err
		}
		if j.Deleted {
			return deletedJob(jobID)
		}
		ev, err := fn(j)
		if err != nil {
			return err
		}
		_, err = x.jobs.appendTx(ctx, tx, j, x.jobs.stream(j.JobID, j.TenantID), j.Version, md, ev)
		return err
	})
	if err != nil {
		return nil, err
	}
	return j, nil
}

// load replays a job's events; a job of another tenant, or a deleted one, is ErrNotFound.
func (x *Exports) load(ctx context.Context, tenant, jobID string) (*export.Job, error) {
	j, err := x.jobs.load(ctx, tenant, jobID)
	if err != nil {
		return nil, err
	}
	if j.Deleted {
		return nil, deletedJob(jobID)
	}
	return j, nil
}

// deletedJob is the error of a load that found jobID deleted.
func deletedJob(jobID string) error { return fmt.Errorf("%w: export %s", ErrNotFound, jobID) }
