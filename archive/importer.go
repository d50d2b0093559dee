package archive

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/mailledger/mailledger/database"
)

// ImportFailure names a message that could not be archived, and why.
type ImportFailure struct {
	Source string
	Err    error
}

func (f ImportFailure) String() string { return fmt.Sprintf("%s: %v", f.Source, f.Err) }

// ImportReport counts what an import did.
type ImportReport struct {
	Imported   int
	Duplicates int
	Discarded  int // spam under the discard policy (SPAM_POLICY=discard): not stored
	Failed     int
	Bytes      int64
	Failures   []ImportFailure
	IDs        []int64 // ids of the imported (new) messages, in commit order
}

// Summary is the line the import command prints at the end.
func (r ImportReport) Summary() string {
	s := fmt.Sprintf("imported %d, duplicates %d, failed %d", r.Imported, r.Duplicates, r.Failed)
	if r.Discarded > 0 {
		s += fmt.Sprintf(", spam discarded %d", r.Discarded)
	}
	return s
}

// Importer archives many messages: parsing and sealing run on Workers goroutines, and
// commits go in batches of BatchSize messages per transaction.
type Importer struct {
	Archive   *Archive
	Workers   int
	BatchSize int
	// Progress, when set, is called after each batch with the files done so far and the
	// number of files to read (an mbox counts once).
	Progress func(done, total int)
	// MaxQueuedBytes bounds the bytes of the messages read but not yet taken into a batch
	// (0: 256 MiB); MaxBatchBytes commits a batch before it has BatchSize messages once
	// they hold that many bytes (0: 64 MiB). Together they bound the importer's memory
	// whatever the size of the messages.
	MaxQueuedBytes int64
	MaxBatchBytes  int
	// Committers is how many batches are committed at once, each in its own transaction
	// (0: Archive.Committers, 2 on MySQL and 1 elsewhere). Each adds a batch to the memory
	// the import holds.
	Committers int
	Now        func() time.Time
}

// Import archives every message under paths into tenant. One bad message never stops the
// batch: it is counted as failed, with its file named. The error is non-nil only when
// the import as a whole could not go on (unreadable arguments, database down, ctx ended
// before every message was read); the goroutines it started have ended or are ending
// then, whatever the reason.
func (im *Importer) Import(ctx context.Context, tenant string, paths []string) (ImportReport, error) {
	files, err := SourceFiles(paths)
	if err != nil {
		return ImportReport{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The workers prepare the next batches while one commits: the prepared queue holds two
	// batches. The bytes queued (read, not yet taken into a batch) are bounded by
	// maxInFlight, and a batch is committed early once it holds maxBatchBytes.
	budget := semaphore.NewWeighted(im.maxQueued())
	sources := make(chan source, 64)
	go readSources(ctx, files, sources, budget, im.weight)
	prepared := make(chan prepResult, 2*im.batchSize())
	im.prepareAll(ctx, tenant, sources, prepared)
	return im.commitAll(ctx, len(files), prepared, budget)
}

type prepResult struct {
	p          *Prepared
	source     string
	size       int
	err        error
	countsFile bool // the first message of its file (for progress)
}

// prepareAll starts the workers that parse and seal what in brings, and closes out when
// they are done. A worker gives up a result when ctx is done: once Import returns (a
// commit failed, or the caller cancelled), nobody reads out, and a worker blocked on it
// would never end.
func (im *Importer) prepareAll(ctx context.Context, tenant string, in <-chan source, out chan<- prepResult) {
	workers := im.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	now := time.Now
	if im.Now != nil {
		now = im.Now
	}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range in {
				r := prepResult{source: s.name, size: len(s.raw), err: s.err, countsFile: s.countsFile}
				if r.err == nil {
					r.p, r.err = im.Archive.Prepare(Incoming{Tenant: tenant, Raw: s.raw, Arrived: now(), Source: s.name})
					if r.err == nil {
						r.p.release()
					}
				}
				select {
				case out <- r:
				case <-ctx.Done():
				}
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
}

// Defaults of MaxQueuedBytes and MaxBatchBytes.
const (
	defaultMaxQueued     = 256 << 20
	defaultMaxBatchBytes = 64 << 20
)

func (im *Importer) maxQueued() int64 {
	if im.MaxQueuedBytes <= 0 {
		return defaultMaxQueued
	}
	return im.MaxQueuedBytes
}

func (im *Importer) maxBatchBytes() int {
	if im.MaxBatchBytes <= 0 {
		return defaultMaxBatchBytes
	}
	return im.MaxBatchBytes
}

// weight is what a message of size bytes takes of MaxQueuedBytes: its size, at least 1
// and at most all of it (a message larger than the bound still goes through, alone).
func (im *Importer) weight(size int) int64 { return min(max(int64(size), 1), im.maxQueued()) }

// batchSize is BatchSize, or when unset the archive's ImportBatch.
func (im *Importer) batchSize() int {
	if im.BatchSize <= 0 {
		return im.Archive.ImportBatch()
	}
	return im.BatchSize
}

// commitAll takes the prepared messages off in and commits them in batches, on
// committers() goroutines each with its own transaction, until in is closed or a commit
// fails for the whole import.
func (im *Importer) commitAll(ctx context.Context, total int, in <-chan prepResult, budget *semaphore.Weighted) (ImportReport, error) {
	size := im.batchSize()
	var (
		mu       sync.Mutex // guards rep and shown
		rep      ImportReport
		shown    int // the progress last reported
		failures ImportReport
	)
	type batchOf struct {
		msgs []*Prepared
		done int // files read when the batch was closed
	}
	batches := make(chan batchOf)
	g, gctx := errgroup.WithContext(ctx)
	for range im.committers() {
		g.Go(func() error {
			for b := range batches {
				var part ImportReport
				err := im.commitBatch(gctx, b.msgs, &part)
				mu.Lock()
				merge(&rep, part)
				// Batches finish out of order; the progress shown never goes back.
				if b.done > shown {
					shown = b.done
				}
				if im.Progress != nil {
					im.Progress(shown, total)
				}
				mu.Unlock()
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	var batch []*Prepared
	var bytes int // of the batch's messages
	done := 0
	send := func() bool { // an empty batch still reports the progress
		select {
		case batches <- batchOf{batch, done}:
			batch, bytes = nil, 0
			return true
		case <-gctx.Done():
			return false
		}
	}
	for r := range in {
		budget.Release(im.weight(r.size)) // out of the queue
		if r.countsFile {
			done++
		}
		if r.err != nil {
			failures.Failed++
			failures.Failures = append(failures.Failures, ImportFailure{Source: r.source, Err: r.err})
			continue
		}
		batch = append(batch, r.p)
		bytes += r.size
		if len(batch) >= size || bytes >= im.maxBatchBytes() {
			if !send() {
				break
			}
		}
	}
	if gctx.Err() == nil {
		send()
	}
	close(batches)
	err := g.Wait()
	merge(&rep, failures)
	if ctx.Err() != nil { // the caller's cancellation, whatever a commit made of it
		return rep, stopped(ctx)
	}
	return rep, err
}

// committers is how many batches commit at once: Committers, or Archive.Committers.
func (im *Importer) committers() int {
	if im.Committers > 0 {
		return im.Committers
	}
	return im.Archive.Committers()
}

// ImportBatch is how many messages an import commits in one transaction by default: 1,000
// on SQLite, 200 elsewhere. SQLite's single writer is what bounds its import, and each of
// its commits writes every page it changed to the WAL and copies it to the database file
// after; a larger batch changes fewer pages a message (a domain's or an address's last
// index page takes many of the batch's rows) and leaves its postings in one FTS5 segment
// with migration 00030 (docs/performance.md, "SQLite: one segment a batch"). The MaxBatchBytes
// bound still ends a batch of large messages sooner.
func (a *Archive) ImportBatch() int {
	if a.db.Dialect == database.SQLite {
		return 1000
	}
	return 200
}

// Committers is how many commits of new messages are worth running at once on the
// archive's database, each in its own transaction: 2 on MySQL, where one connection's
// commits leave the server's second core idle (docs/performance.md, "MariaDB: two batches
// committed at once"), 1 elsewhere (SQLite has a single writer; PostgreSQL's import met
// its goals with one). The importer and the SMTP receiver take it as their default.
func (a *Archive) Committers() int {
	if a.db.Dialect == database.MySQL {
		return 2
	}
	return 1
}

// merge adds part's counts, failures and ids to rep.
func merge(rep *ImportReport, part ImportReport) {
	rep.Imported += part.Imported
	rep.Duplicates += part.Duplicates
	rep.Discarded += part.Discarded
	rep.Failed += part.Failed
	rep.Bytes += part.Bytes
	rep.Failures = append(rep.Failures, part.Failures...)
	rep.IDs = append(rep.IDs, part.IDs...)
}

// stopped is the error of an import whose ctx ended before every message was read: the
// reader and the workers drop what they hold then, so the report is incomplete.
func stopped(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("import cancelled: %w", err)
	}
	return nil
}

// commitBatch commits a batch. A batch that fails as a whole is tried once more: another
// transaction committing at the same time (a second committer, the SMTP receiver) may have
// held one of its messages, or a deadlock chose it, and the new transaction sees what the
// other committed. Then each message is tried alone, twice at most, so that one bad message
// fails alone. A database that does not answer stops the import.
func (im *Importer) commitBatch(ctx context.Context, batch []*Prepared, rep *ImportReport) error {
	if len(batch) == 0 {
		return nil
	}
	res, err := im.Archive.Commit(ctx, batch)
	if err != nil {
		if pingErr := im.Archive.db.PingContext(ctx); pingErr != nil {
			return fmt.Errorf("database: %w", pingErr)
		}
		res, err = im.Archive.Commit(ctx, batch)
	}
	if err == nil {
		record(rep, batch, res)
		return nil
	}
	for _, p := range batch {
		one := []*Prepared{p}
		res, err := im.Archive.Commit(ctx, one)
		if err != nil && ctx.Err() == nil {
			res, err = im.Archive.Commit(ctx, one)
		}
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			rep.Failed++
			rep.Failures = append(rep.Failures, ImportFailure{Source: p.In.Source, Err: err})
			continue
		}
		record(rep, one, res)
	}
	return nil
}

func record(rep *ImportReport, batch []*Prepared, res []Result) {
	for i, r := range res {
		switch {
		case r.Discarded:
			rep.Discarded++
			continue
		case r.Duplicate:
			rep.Duplicates++
			continue
		}
		rep.Imported++
		rep.Bytes += int64(batch[i].Msg.Size)
		rep.IDs = append(rep.IDs, r.ID)
	}
}
