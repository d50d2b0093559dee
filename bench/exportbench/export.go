package main

import (
	"bufio"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

// readResult is one pass over every message by a few goroutines.
type readResult struct {
	took  time.Duration
	cpu   time.Duration // the process's CPU time during the pass
	n     int
	bytes int64
}

// readAll calls one for every id on readers goroutines and times the whole pass.
func readAll(ctx context.Context, readers int, ids []int64, one func(context.Context, int64) (int, error)) (readResult, error) {
	var next atomic.Int64
	var total atomic.Int64
	errs := make([]error, readers)
	var wg sync.WaitGroup
	start, cpu := time.Now(), processCPU()
	for w := range readers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(ids)) && errs[w] == nil; i = next.Add(1) - 1 {
				n, err := one(ctx, ids[i])
				errs[w] = err
				total.Add(int64(n))
			}
		})
	}
	wg.Wait()
	return readResult{took: time.Since(start), cpu: processCPU() - cpu, n: len(ids), bytes: total.Load()}, errors.Join(errs...)
}

// decryptOne is the decrypt-only read: the original bytes, integrity checked.
func (e *benchEnv) decryptOne(ctx context.Context, id int64) (int, error) {
	raw, err := e.arc.Raw(ctx, tenant, id)
	return len(raw), err
}

// documentOne is what an export's worker reads: the original, its metadata and its parse.
func (e *benchEnv) documentOne(ctx context.Context, id int64) (int, error) {
	doc, err := e.arc.ReadDocument(ctx, tenant, id)
	if err != nil {
		return 0, err
	}
	return len(doc.Raw), nil
}

// md5Sink receives a byte of each floor MD5.
var md5Sink atomic.Uint64

// floorDoc is what an export writes for one email besides its native: its text and its
// decoded attachments, prepared before the floor pass is timed.
type floorDoc struct {
	text    []byte
	atts    [][]byte
	sums    [][16]byte // MD5s computed by the pass with hashes
	digests [][32]byte // attachments' SHA-256s computed by the pass with hashes
}

// prepareFloor parses every message (not timed) for the floor pass.
func (e *benchEnv) prepareFloor(ctx context.Context, ids []int64) (map[int64]*floorDoc, error) {
	docs := make(map[int64]*floorDoc, len(ids))
	for _, id := range ids {
		doc, err := e.arc.ReadDocument(ctx, tenant, id)
		if err != nil {
			return nil, err
		}
		f := &floorDoc{text: []byte(doc.Msg.Text)}
		for _, a := range doc.Msg.Attachments {
			f.atts = append(f.atts, a.Content)
		}
		docs[id] = f
	}
	return docs, nil
}

// floorOne is the floor of any export: the decrypt-only read of one email plus the creation
// of the same files an export writes for it (native, text, attachments), with nothing
// parsed, hashed or recorded. An export cannot be faster than this pass. With hashes set it
// also computes what the load files and the manifest must hold and nothing stored at import
// gives: the MD5 of the native and of each attachment and the SHA-256 of each attachment
// (the native's SHA-256 is the digest the read has just checked). That is the work
// docs/api.md requires of an export that has its parse for free.
func floorOne(e *benchEnv, dir string, docs map[int64]*floorDoc, hashes bool) func(context.Context, int64) (int, error) {
	return func(ctx context.Context, id int64) (int, error) {
		raw, err := e.arc.Raw(ctx, tenant, id)
		if err != nil {
			return 0, err
		}
		name := strconv.FormatInt(id, 10)
		if docs == nil { // natives only: the MD5 of the native and its file
			sum := md5.Sum(raw)
			md5Sink.Add(uint64(sum[0])) // kept, so the hash is not optimised away
			return len(raw), os.WriteFile(filepath.Join(dir, "NATIVES", name+".eml"), raw, 0o640)
		}
		d := docs[id]
		if hashes {
			d.sums, d.digests = append(d.sums[:0], md5.Sum(raw)), d.digests[:0]
			for _, a := range d.atts {
				d.sums = append(d.sums, md5.Sum(a))
				d.digests = append(d.digests, sha256.Sum256(a))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "NATIVES", name+".eml"), raw, 0o640); err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(dir, "TEXT", name+".txt"), d.text, 0o640); err != nil {
			return 0, err
		}
		for k, a := range d.atts {
			if err := os.WriteFile(filepath.Join(dir, "ATTACHMENTS", fmt.Sprintf("%s_%03d.bin", name, k+1)), a, 0o640); err != nil {
				return 0, err
			}
		}
		return len(raw), nil
	}
}

// floorPass prepares the documents, then times floorOne over every id in a fresh directory
// under work: without hashes, with the load files' hashes, and for natives only (decrypt,
// MD5, the native's file: the floor of a natives-only production). The directories stay
// until the run's work directory is removed at the end: removing 23,000 files just before
// the export would slow the export's own file creation on a file system without a
// journal, where ext4 skips recently freed inodes one by one (see "Export" in
// docs/performance.md).
func (e *benchEnv) floorPass(ctx context.Context, readers int, work string) (floor, hashed, natives readResult, err error) {
	docs, err := e.prepareFloor(ctx, e.ids)
	if err != nil {
		return floor, hashed, natives, err
	}
	for _, pass := range []struct {
		res    *readResult
		docs   map[int64]*floorDoc
		hashes bool
	}{{&floor, docs, false}, {&hashed, docs, true}, {&natives, nil, true}} {
		dir, err := os.MkdirTemp(work, "floor-")
		if err != nil {
			return floor, hashed, natives, err
		}
		for _, sub := range []string{"NATIVES", "TEXT", "ATTACHMENTS"} {
			if err := os.Mkdir(filepath.Join(dir, sub), 0o750); err != nil {
				return floor, hashed, natives, err
			}
		}
		if *pass.res, err = readAll(ctx, readers, e.ids, floorOne(e, dir, pass.docs, pass.hashes)); err != nil {
			return floor, hashed, natives, err
		}
	}
	return floor, hashed, natives, nil
}

// exportResult is the timed export and what it produced.
type exportResult struct {
	took       time.Duration
	cpu        time.Duration // the process's CPU time during the export
	queued     time.Duration // created_at to started_at: the admission by the background consumer
	ran        time.Duration // started_at to completed_at, as the ledger recorded them
	jobID      string
	status     string
	processed  int
	failed     int
	outputSize int64
	files      int    // files in the production
	heapPeak   uint64 // highest HeapInuse sampled during the export
	rssPeak    uint64 // VmHWM after the export, the peak having been reset just before it
	rssReset   bool   // whether the reset worked (else rssPeak covers the whole process)
}

// exporter is the export use cases over the benchmark's archive, with the scheduler
// consumer and the runs going, as serve runs them.
type exporter struct {
	store *eventstore.Store
	x     *app.Exports
	stop  func() error
}

func (e *benchEnv) startExports(ctx context.Context, workers int) (*exporter, error) {
	store, err := eventstore.New(e.db.DB, eventstore.Options{Projectors: projections.All()})
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.DiscardHandler)
	x, err := app.NewExports(store, e.arc, app.ExportsConfig{Dir: e.exportDir, Workers: workers, Logger: quiet})
	if err != nil {
		return nil, err
	}
	bg, err := app.NewBackground(store, app.BackgroundConfig{Logger: quiet})
	if err != nil {
		return nil, err
	}
	x.Register(bg)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() { done <- bg.Run(ctx) }()
	go func() { done <- x.Run(ctx) }()
	<-bg.Running()
	return &exporter{store: store, x: x, stop: func() error {
		cancel()
		return errors.Join(<-done, <-done)
	}}, nil
}

// request is the benchmark's all-options export (every option that writes files on,
// both load files), or with nativesOnly the natives-only one (natives and the CSV).
func request(ids []int64, workers int, nativesOnly bool) export.Request {
	on, both, prefix := true, export.FormatBoth, "BENCH"
	if nativesOnly {
		off, csv, prefix := false, export.FormatCSV, "NATIVE"
		return export.Request{BatesPrefix: &prefix, IncludeNatives: &on, IncludeText: &off, IncludeAttachments: &off,
			LoadFileFormat: &csv, EmailIDs: ids, Workers: &workers}
	}
	return export.Request{BatesPrefix: &prefix, IncludeNatives: &on, IncludeText: &on, IncludeAttachments: &on,
		LoadFileFormat: &both, EmailIDs: ids, Workers: &workers}
}

// runExport creates the job and waits for its end, sampling the heap meanwhile. The time
// runs from the create call to the moment the job is seen completed (polled every 20 ms:
// each poll reads the job's configuration, whose 10,000 ids cost about 0.5 ms to decode):
// it includes the admission by the background consumer, as a client sees it.
func (e *benchEnv) runExport(ctx context.Context, ex *exporter, workers int, nativesOnly bool) (exportResult, error) {
	runtime.GC()
	debug.FreeOSMemory()
	res := exportResult{rssReset: os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil}
	stopSampling := sampleHeap(&res.heapPeak)
	start, cpu := time.Now(), processCPU()
	v, err := ex.x.Create(ctx, tenant, request(e.ids, workers, nativesOnly), domain.Metadata{Actor: "exportbench"})
	if err != nil {
		stopSampling()
		return res, err
	}
	for v.Status != export.StatusCompleted && v.Status != export.StatusFailed && v.Status != export.StatusCancelled {
		time.Sleep(50 * time.Millisecond)
		if v, err = ex.x.Get(ctx, tenant, v.JobID); err != nil {
			stopSampling()
			return res, err
		}
	}
	res.took, res.cpu = time.Since(start), processCPU()-cpu
	stopSampling()
	res.rssPeak = procStatus("VmHWM")
	res.jobID, res.status, res.processed, res.failed = v.JobID, v.Status, v.Processed, v.Failed
	if v.StartedAt != nil && v.CompletedAt != nil {
		res.queued, res.ran = v.StartedAt.Sub(v.CreatedAt), v.CompletedAt.Sub(*v.StartedAt)
	}
	if v.OutputSize != nil {
		res.outputSize = *v.OutputSize
	}
	if v.Status != export.StatusCompleted {
		return res, fmt.Errorf("export ended %s: %v", v.Status, v.ErrorMessage)
	}
	res.files, err = countFiles(filepath.Join(e.exportDir, tenant, "ediscovery", v.JobID))
	return res, err
}

// countFiles counts the regular files under dir.
func countFiles(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	return n, err
}

// sampleHeap records the highest HeapInuse every 20 ms until the returned function is
// called.
func sampleHeap(peak *uint64) func() {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			*peak = max(*peak, m.HeapInuse)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(stop); <-done }
}

// procStatus reads a "kB" field of /proc/self/status, in bytes (0 when unavailable).
func procStatus(field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if ok && name == field {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
