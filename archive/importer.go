package archive

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
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
	Now            func() time.Time
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

// batchSize is BatchSize, or 200 when unset.
func (im *Importer) batchSize() int {
	if im.BatchSize <= 0 {
		return 200
	}
	return im.BatchSize
}

// commitAll takes the prepared messages off in and commits them in batches, until in is
// closed or a commit fails for the whole import.
func (im *Importer) commitAll(ctx context.Context, total int, in <-chan prepResult, budget *semaphore.Weighted) (ImportReport, error) {
	size := im.batchSize()
	var rep ImportReport
	var batch []*Prepared
	var bytes int // of the batch's messages
	done := 0
	flush := func() error {
		err := im.commitBatch(ctx, batch, &rep)
		batch, bytes = batch[:0], 0
		if im.Progress != nil {
			im.Progress(done, total)
		}
		return err
	}
	for r := range in {
		budget.Release(im.weight(r.size)) // out of the queue
		if r.countsFile {
			done++
		}
		if r.err != nil {
			rep.Failed++
			rep.Failures = append(rep.Failures, ImportFailure{Source: r.source, Err: r.err})
			continue
		}
		batch = append(batch, r.p)
		bytes += r.size
		if len(batch) >= size || bytes >= im.maxBatchBytes() {
			if err := flush(); err != nil {
				return rep, err
			}
		}
	}
	if err := flush(); err != nil {
		return rep, err
	}
	return rep, stopped(ctx)
}

// stopped is the error of an import whose ctx ended before every message was read: the
// reader and the workers drop what they hold then, so the report is incomplete.
func stopped(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("import cancelled: %w", err)
	}
	return nil
}

// commitBatch commits a batch; when the batch fails as a whole, each message is tried
// alone so that one bad message fails alone. A database that does not answer stops the
// import.
func (im *Importer) commitBatch(ctx context.Context, batch []*Prepared, rep *ImportReport) error {
	if len(batch) == 0 {
		return nil
	}
	res, err := im.Archive.Commit(ctx, batch)
	if err == nil {
		record(rep, batch, res)
		return nil
	}
	if pingErr := im.Archive.db.PingContext(ctx); pingErr != nil {
		return fmt.Errorf("database: %w", pingErr)
	}
	for _, p := range batch {
		res, err := im.Archive.Commit(ctx, []*Prepared{p})
		if err != nil {
			rep.Failed++
			rep.Failures = append(rep.Failures, ImportFailure{Source: p.In.Source, Err: err})
			continue
		}
		record(rep, []*Prepared{p}, res)
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
		rep.Bytes += int64(len(batch[i].In.Raw))
		rep.IDs = append(rep.IDs, r.ID)
	}
}
