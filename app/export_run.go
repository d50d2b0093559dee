package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/production"
)

// Skip reasons, the error_message of skipped items.
const (
	SkipNotFound       = "not found in this tenant, erased or purged"
	SkipPendingErasure = "in the scope of an approved or executing erasure request"
)

// errStopped means the job left running while it ran (cancelled elsewhere).
var errStopped = errors.New("export is no longer running")

// jobRun is one run of a job: workers read and prepare the emails in parallel, and one
// writer takes their outcomes in email_ids order, numbers the produced ones, writes them
// and records the items in batches.
type jobRun struct {
	x *Exports
	// job is the writer's: record replaces it after a lost race. The workers and the
	// dispatcher read ids, tenant and readDoc instead, which no event changes.
	job    *export.Job
	ids    []int64
	tenant string
	// readDoc is how a worker reads one email: Archive.ReadNative when the production holds
	// natives only (no MIME parse at all), else Archive.ReadDocument, with the production's
	// own checks (production.Checked).
	readDoc production.Reader
	prod    *production.Writer
	next    int64 // the next Bates number
	batch   []export.Item
	flushed time.Time
	erasure atomic.Pointer[map[string]bool] // addresses of approved or executing erasure requests
}

// outcome is what a worker found for one email id.
type outcome struct {
	index  int
	weight int64             // the bytes of the memory budget it holds until taken
	doc    *archive.Document // nil unless it can be produced
	item   export.Item
	err    error // a failure of the job, not of the item
}

// runJob runs an admitted job to its end: completed, failed (its output removed), or
// stopped by a cancel (its output removed; the cancel is already recorded).
func (x *Exports) runJob(ctx context.Context, jobID string) {
	j, err := x.load(ctx, AllTenants, jobID)
	if err != nil || j.Status != export.StatusRunning {
		if err != nil {
			x.cfg.Logger.Error("export run", "job_id", jobID, "error", err.Error())
		}
		return
	}
	read := x.arc.ReadDocument
	if !j.Config.IncludeText && !j.Config.IncludeAttachments {
		read = x.arc.ReadNative
	}
	r := &jobRun{x: x, job: j, ids: j.Config.EmailIDs, tenant: j.TenantID, readDoc: production.Checked(read),
		next: j.NextBates(), flushed: time.Now()}
	err = r.run(ctx)
	r.finish(ctx, err)
}

func (r *jobRun) run(ctx context.Context) error {
	prod, err := production.Create(r.x.cfg.Dir, r.job.TenantID, r.job.JobID, productionConfig(r.job.Config))
	if err != nil {
		return err
	}
	r.prod = prod
	if err := r.refreshErasure(ctx); err != nil {
		return err
	}
	if err := r.produce(ctx); err != nil {
		return err
	}
	if err := r.flush(ctx); err != nil {
		return err
	}
	return r.complete(ctx)
}

func productionConfig(c export.Config) production.Config {
	return production.Config{
		Prefix: c.BatesPrefix, Digits: c.BatesDigits, Natives: c.IncludeNatives, Text: c.IncludeText,
		Attachments: c.IncludeAttachments, ByCustodian: c.OrganizeByCustodian,
		CSV: c.LoadFileFormat != export.FormatDAT, DAT: c.LoadFileFormat != export.FormatCSV,
		DateFormat: c.DateFormat, Concordance: c.DatDelimiters == export.DelimitersConcordance,
	}
}

// produce runs the workers and the writer. Memory is bounded whatever the job's size and
// its emails' sizes: at most window emails of the job are in flight (read or being read,
// not yet written), and all jobs together hold at most MaxInFlightBytes of originals. The
// dispatcher takes both before it hands an email out, in email_ids order, and the writer
// gives them back once it has taken the email. Taking the bytes in order is what keeps it
// from deadlocking: the email a job's writer waits for always got its bytes before any
// later email of the job did.
func (r *jobRun) produce(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := r.job.Config.Workers
	window := 2*workers + 2
	tokens := make(chan struct{}, window)
	tickets := make(chan ticket)
	results := make(chan outcome, window)
	var wg sync.WaitGroup
	wg.Go(func() { r.dispatch(ctx, tokens, tickets) })
	for range workers {
		wg.Go(func() {
			for t := range tickets {
				o := r.read(ctx, t)
				select {
				case results <- o:
				case <-ctx.Done():
					r.release(o.weight)
					return
				}
			}
		})
	}
	err := r.write(ctx, results, tokens)
	cancel()
	wg.Wait()
	for { // what the writer never took
		select {
		case o := <-results:
			r.release(o.weight)
			continue
		default:
		}
		break
	}
	return err
}

// ticket is one email handed to a worker: its index in email_ids and the bytes of the
// memory budget it holds (or the error that kept it from being weighed).
type ticket struct {
	index  int
	weight int64
	err    error
}

// sizeChunk is how many email sizes the dispatcher reads in one query.
const sizeChunk = 500

// dispatch hands out the indexes in order, each once a window token is free and its
// weight (its size, at most the whole budget) is taken from the memory budget.
func (r *jobRun) dispatch(ctx context.Context, tokens chan struct{}, tickets chan<- ticket) {
	defer close(tickets)
	ids := r.ids
	var sizes map[int64]int64
	for i := range ids {
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			return
		}
		t := ticket{index: i, weight: 1}
		if i%sizeChunk == 0 {
			sizes, t.err = r.x.arc.Sizes(ctx, r.tenant, ids[i:min(i+sizeChunk, len(ids))])
		}
		size := int64(1)
		if s, ok := sizes[ids[i]]; ok && t.err == nil {
			size = s
		}
		var err error
		if t.weight, err = r.x.memory.Acquire(ctx, size); err != nil {
			return
		}
		select {
		case tickets <- t:
		case <-ctx.Done():
			r.release(t.weight)
			return
		}
	}
}

// release gives weight bytes back to the memory budget.
func (r *jobRun) release(weight int64) {
	r.x.memory.Release(weight)
}

// read reads and checks one email: skipped when it is not a visible message of the tenant
// or an erasure is about to remove it, failed when its file fails the checks.
func (r *jobRun) read(ctx context.Context, t ticket) outcome {
	id := r.ids[t.index]
	o := outcome{index: t.index, weight: t.weight, item: export.Item{EmailID: id}}
	if t.err != nil {
		o.err = fmt.Errorf("read email sizes: %w", t.err)
		return o
	}
	doc, err := r.readDoc(ctx, r.tenant, id)
	switch {
	case errors.Is(err, archive.ErrNotFound):
		o.item.Status, o.item.ErrorMessage = export.ItemSkipped, SkipNotFound
	case errors.Is(err, archive.ErrIntegrity), errors.Is(err, archive.ErrUnknownKey), errors.Is(err, production.ErrUnreadable):
		o.item.Status, o.item.ErrorMessage = export.ItemFailed, err.Error()
	case err != nil:
		o.err = fmt.Errorf("read email %d: %w", id, err)
	case r.pendingErasure(doc):
		o.item.Status, o.item.ErrorMessage = export.ItemSkipped, SkipPendingErasure
	default:
		o.doc = doc
	}
	return o
}

// write takes the outcomes in email_ids order, produces the documents and records the
// items, flushing a batch every ProgressItems items or ProgressInterval.
func (r *jobRun) write(ctx context.Context, results <-chan outcome, tokens <-chan struct{}) error {
	ticker := time.NewTicker(r.x.cfg.ProgressInterval)
	defer ticker.Stop()
	held := map[int]outcome{}
	defer r.releaseAll(held) // what it will not take when it stops early
	for next := 0; next < len(r.job.Config.EmailIDs); {
		select {
		case o := <-results:
			held[o.index] = o
		case <-ticker.C:
			if err := r.tick(ctx); err != nil {
				return err
			}
			continue
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		for o, ok := held[next]; ok; o, ok = held[next] {
			delete(held, next)
			err := r.take(ctx, o) // gives o's bytes back
			<-tokens
			next++
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// releaseAll gives back the bytes of outcomes the writer holds and will not take.
func (r *jobRun) releaseAll(held map[int]outcome) {
	for i, o := range held {
		r.release(o.weight)
		delete(held, i)
	}
}

// take numbers and writes one produced email, and adds its item to the batch. The email's
// bytes go back to the memory budget once its files are written (the production writes
// them in the background), or at once when it writes none.
func (r *jobRun) take(ctx context.Context, o outcome) error {
	if o.doc == nil || o.err != nil {
		r.release(o.weight)
	}
	if o.err != nil {
		return o.err
	}
	if o.doc != nil {
		bates, err := r.prod.AddThen(r.next, o.doc, func() { r.release(o.weight) })
		if err != nil {
			return err
		}
		o.item.Status, o.item.BatesNumber, o.item.Number = export.ItemSuccess, bates, r.next
		r.next++
	}
	r.batch = append(r.batch, o.item)
	if len(r.batch) >= r.x.cfg.ProgressItems {
		return r.flush(ctx)
	}
	return nil
}

// tick flushes a batch that waited ProgressInterval and re-reads the erasure scope.
func (r *jobRun) tick(ctx context.Context) error {
	if time.Since(r.flushed) >= r.x.cfg.ProgressInterval {
		if err := r.flush(ctx); err != nil {
			return err
		}
	}
	return r.refreshErasure(ctx)
}

// flush records the batch in one export.items_processed event. A race lost to a
// command (a download or a cancel) is retried on the new state; a job that is no longer
// running stops the run.
func (r *jobRun) flush(ctx context.Context) error {
	r.flushed = time.Now()
	if len(r.batch) == 0 {
		return nil
	}
	if err := r.record(ctx, func(j *export.Job) (domain.Event, error) { return j.Progress(r.batch) }); err != nil {
		return err
	}
	r.batch = r.batch[:0]
	return nil
}

// record appends the event fn decides, reloading the job after a lost race.
func (r *jobRun) record(ctx context.Context, fn func(*export.Job) (domain.Event, error)) error {
	md := domain.Metadata{Actor: exportActor}
	for attempt := 1; ; attempt++ {
		ev, err := fn(r.job)
		if errors.Is(err, domain.ErrInvalidTransition) {
			return errStopped
		}
		if err != nil {
			return err
		}
		err = r.x.append(ctx, r.job, ev, md)
		if !errors.Is(err, eventstore.ErrConcurrentModification) || attempt == decideAttempts {
			return err
		}
		if r.job, err = r.x.load(ctx, AllTenants, r.job.JobID); err != nil {
			return err
		}
	}
}

// complete closes the production and records the completion with its manifest.
func (r *jobRun) complete(ctx context.Context) error {
	loadFiles, err := r.prod.Close()
	if err != nil {
		return err
	}
	m := r.prod.Manifest()
	done := export.Completed{BatesEnd: r.next - 1, OutputSize: m.Size, LoadFiles: loadFiles, ManifestHash: m.Hash, ProducedFiles: m.Files}
	if r.next == r.job.Reserved.Start {
		done.BatesEnd = 0 // nothing produced
	}
	return r.record(ctx, func(j *export.Job) (domain.Event, error) { return j.Complete(done) })
}

// finish ends a run that returned err: nothing more on success; otherwise the partial
// output is removed and, unless a cancel stopped the run, the job is failed.
func (r *jobRun) finish(ctx context.Context, err error) {
	if err == nil {
		r.x.cfg.Logger.InfoContext(ctx, "export completed", "job_id", r.job.JobID, "tenant", r.job.TenantID,
			"emails", r.job.Total, "produced", r.job.Processed-r.job.Failed, "failed", r.job.Failed,
			"bates_end", r.job.BatesEnd, "seconds", time.Since(r.job.StartedAt).Seconds())
		return
	}
	if r.prod != nil {
		if rmErr := r.prod.Abort(); rmErr != nil {
			r.x.cfg.Logger.Error("remove export output", "job_id", r.job.JobID, "error", rmErr.Error())
		}
	}
	cause := context.Cause(ctx)
	if errors.Is(err, errStopped) || errors.Is(cause, errCancelled) {
		return
	}
	message := err.Error()
	if errors.Is(cause, errShutdown) {
		message = InterruptedMessage
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if ferr := r.x.failJob(fctx, r.job, message); ferr != nil {
		r.x.cfg.Logger.Error("record export failure", "job_id", r.job.JobID, "error", ferr.Error())
	}
	r.x.cfg.Logger.Warn("export failed", "job_id", r.job.JobID, "error", message)
}
