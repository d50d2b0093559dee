package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/production"
)

// ExportSchedulerConsumer names the consumer that admits pending jobs (its offset's key in
// consumer_offsets).
const ExportSchedulerConsumer = "export-scheduler"

// exportActor is the actor of the events the scheduler and the runner record.
const exportActor = "system:export"

// InterruptedMessage is the error_message of a job that was running when the service
// stopped; such a job is failed, never resumed or renumbered.
const InterruptedMessage = "interrupted: the service stopped while the export was running"

var (
	errCancelled = errors.New("export cancelled")
	errShutdown  = errors.New("service stopping")
)

// Register adds the scheduler consumer to b: after a job is created, completed, failed or
// cancelled it admits the pending jobs that now fit, and a cancelled job's run stops.
func (x *Exports) Register(b *Background) {
	b.AddHandler(ExportSchedulerConsumer, x.HandleEvent)
}

// HandleEvent is the scheduler consumer. It is idempotent, and does nothing while Run is
// not running (Run admits at its start).
func (x *Exports) HandleEvent(ctx context.Context, rec eventstore.Record) error {
	if rec.StreamType != export.StreamType {
		return nil
	}
	switch rec.EventType {
	case export.EventCancelled:
		x.stop(jobIDOf(rec), errCancelled)
	case export.EventCreated, export.EventCompleted, export.EventFailed:
	default:
		return nil
	}
	return x.admit(ctx)
}

func jobIDOf(rec eventstore.Record) string {
	return strings.TrimPrefix(rec.StreamID, export.StreamID(""))
}

// Run runs export jobs until ctx is done. It first fails every job still marked running
// (a run of an earlier process that stopped: InterruptedMessage) and removes its partial
// output, freeing its slot, then admits the pending jobs that fit. On return every run of
// this process has stopped: a job interrupted by the shutdown is failed the same way.
func (x *Exports) Run(ctx context.Context) error {
	if err := x.recoverInterrupted(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting: a shutdown, not a failure
		}
		return err
	}
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	x.mu.Lock()
	if x.runCtx != nil {
		x.mu.Unlock()
		cancel(nil)
		return errors.New("app: exports are already running")
	}
	x.runCtx = runCtx
	x.mu.Unlock()
	err := x.admit(ctx)
	if ctx.Err() != nil {
		err = nil // stopped while admitting: a shutdown, not a failure
	}
	if err == nil {
		<-ctx.Done()
	}
	x.mu.Lock()
	x.runCtx = nil
	x.mu.Unlock()
	cancel(errShutdown)
	x.wg.Wait()
	return err
}

// recoverInterrupted fails the jobs marked running, none of which runs in this process.
func (x *Exports) recoverInterrupted(ctx context.Context) error {
	ids, err := x.jobsIn(ctx, export.StatusRunning)
	if err != nil {
		return err
	}
	for _, id := range ids {
		j, err := x.load(ctx, AllTenants, id)
		if err != nil {
			return err
		}
		if err := x.failJob(ctx, j, InterruptedMessage); err != nil {
			return fmt.Errorf("recover export %s: %w", id, err)
		}
		x.cfg.Logger.Warn("export failed: interrupted", "job_id", id, "tenant", j.TenantID)
	}
	return nil
}

// failJob removes a job's output, then records its failure (unless it already ended): a
// failed job never has files. A removal that fails is logged, and the failure recorded
// all the same.
func (x *Exports) failJob(ctx context.Context, j *export.Job, message string) error {
	if err := production.Remove(x.cfg.Dir, j.TenantID, j.JobID); err != nil {
		x.cfg.Logger.Error("remove export output", "job_id", j.JobID, "error", err.Error())
	}
	_, err := x.decide(ctx, AllTenants, j.JobID, domain.Metadata{Actor: exportActor}, func(j *export.Job) (domain.Event, error) {
		return j.Fail(message)
	})
	if err != nil && !errors.Is(err, domain.ErrInvalidTransition) {
		return err
	}
	return nil
}

func (x *Exports) jobsIn(ctx context.Context, status string) ([]string, error) {
	db := x.store.DB()
	rows, err := db.QueryContext(ctx, db.Rebind(`SELECT job_id FROM ediscovery_exports WHERE status = ? ORDER BY id`), status)
	if err != nil {
		return nil, fmt.Errorf("read %s exports: %w", status, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// admit starts pending jobs, oldest first, while fewer than MaxGlobal jobs run in all and
// fewer than MaxTenant in the job's tenant, deciding in one transaction on
// ediscovery_active_exports under the ledger-head lock; a job of a full tenant waits
// without holding back the jobs of other tenants. The started jobs run in this process.
func (x *Exports) admit(ctx context.Context) error {
	x.mu.Lock()
	running := x.runCtx != nil
	x.mu.Unlock()
	if !running {
		return nil
	}
	var started []string
	err := inLedgerTx(ctx, x.store, func(tx *ledgerTx) error {
		started = nil
		if err := eventstore.LockHead(ctx, tx.Tx); err != nil {
			return err
		}
		slots, err := readSlots(ctx, tx.Tx)
		if err != nil {
			return err
		}
		pending, err := pendingJobs(ctx, tx.Tx)
		if err != nil {
			return err
		}
		for _, p := range pending {
			if slots.total >= x.cfg.MaxGlobal {
				break
			}
			if slots.perTenant[p.tenant] >= x.cfg.MaxTenant {
				continue
			}
			if err := x.startTx(ctx, tx, p); err != nil {
				return err
			}
			slots.total++
			slots.perTenant[p.tenant]++
			started = append(started, p.jobID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("admit exports: %w", err)
	}
	for _, id := range started {
		x.launch(id)
	}
	return nil
}

type slots struct {
	total     int
	perTenant map[string]int
}

func readSlots(ctx context.Context, tx *database.Tx) (slots, error) {
	s := slots{perTenant: map[string]int{}}
	rows, err := tx.Query(ctx, `SELECT tenant_id, COUNT(*) FROM ediscovery_active_exports GROUP BY tenant_id`)
	if err != nil {
		return s, fmt.Errorf("read active exports: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var tenant string
		var n int
		if err := rows.Scan(&tenant, &n); err != nil {
			return s, err
		}
		s.perTenant[tenant], s.total = n, s.total+n
	}
	return s, rows.Err()
}

type pendingJob struct {
	jobID, tenant string
	version       int64
}

// pendingJobs lists the pending jobs in the order they were created, with their stream
// versions.
func pendingJobs(ctx context.Context, tx *database.Tx) ([]pendingJob, error) {
	rows, err := tx.Query(ctx, `SELECT e.job_id, e.tenant_id, s.version FROM ediscovery_exports e JOIN ledger_streams s ON s.stream_id = `+
		streamIDExpr(tx.Dialect)+` WHERE e.status = ? ORDER BY e.id`, export.StatusPending)
	if err != nil {
		return nil, fmt.Errorf("read pending exports: %w", err)
	}
	defer rows.Close()
	var out []pendingJob
	for rows.Next() {
		var p pendingJob
		if err := rows.Scan(&p.jobID, &p.tenant, &p.version); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// streamIDExpr is export.StreamID(e.job_id) in SQL.
func streamIDExpr(d database.Dialect) string {
	if d == database.MySQL {
		return `CONCAT('` + export.StreamID("") + `', e.job_id)`
	}
	return `'` + export.StreamID("") + `' || e.job_id`
}

// startTx appends the job's Started event in tx; the projection takes its slot.
func (x *Exports) startTx(ctx context.Context, tx *ledgerTx, p pendingJob) error {
	j := export.Job{JobID: p.jobID, TenantID: p.tenant, Status: export.StatusPending}
	ev, err := j.Start()
	if err != nil {
		return err
	}
	_, err = x.jobs.appendTx(ctx, tx, nil, x.jobs.stream(p.jobID, p.tenant), p.version, domain.Metadata{Actor: exportActor}, ev)
	return err
}

// launch runs an admitted job on its own goroutine; once it ends, the next jobs are
// admitted.
func (x *Exports) launch(jobID string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.runCtx == nil {
		return // stopping: the job is failed as interrupted at the next start
	}
	ctx, cancel := context.WithCancelCause(x.runCtx)
	r := &runner{cancel: cancel, done: make(chan struct{})}
	x.runners[jobID] = r
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		x.runJob(ctx, jobID)
		x.mu.Lock()
		delete(x.runners, jobID)
		x.mu.Unlock()
		close(r.done)
		cancel(nil)
		if err := x.admit(context.WithoutCancel(ctx)); err != nil {
			x.cfg.Logger.Error("admit exports", "error", err.Error())
		}
	}()
}

// stop ends the run of jobID in this process, if there is one.
func (x *Exports) stop(jobID string, cause error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r := x.runners[jobID]; r != nil {
		r.cancel(cause)
	}
}

// wait waits, for at most a minute, until the run of jobID in this process has ended.
func (x *Exports) wait(jobID string) {
	x.mu.Lock()
	r := x.runners[jobID]
	x.mu.Unlock()
	if r == nil {
		return
	}
	select {
	case <-r.done:
	case <-time.After(time.Minute):
	}
}
