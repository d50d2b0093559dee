package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mailledger/mailledger/database"
)

// processCPU returns this process's user plus system CPU time so far (zero where
// getrusage fails).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS starts a new peak of the resident set (VmHWM) where Linux allows it
// (writing 5 to /proc/self/clear_refs); it says whether it could.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS is the process's peak resident set (VmHWM of /proc/self/status) in bytes, or 0.
// It counts the pages of files the process maps (SQLite's memory-mapped database file)
// as well as its own memory.
func peakRSS() int64 { return procStatus("VmHWM:") }

// anonRSS is the process's resident memory of its own (RssAnon of /proc/self/status: the
// Go heap, SQLite's page caches, stacks) in bytes, or 0: the resident set without the
// pages of mapped files, which are the kernel's page cache and are given back under
// memory pressure.
func anonRSS() int64 { return procStatus("RssAnon:") }

// procStatus reads one field of /proc/self/status given in kB, in bytes (0: unknown).
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// heapObjects is the Go heap in use by objects (live and not yet swept), in bytes.
func heapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// heapSampler records the highest heapObjects and anonRSS seen every interval until
// stopped.
type heapSampler struct {
	stop     chan struct{}
	done     sync.WaitGroup
	peak     int64
	anonPeak int64
}

func startHeapSampler(interval time.Duration) *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), peak: heapObjects(), anonPeak: anonRSS()}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		every(interval, h.stop, func() bool {
			h.peak, h.anonPeak = max(h.peak, heapObjects()), max(h.anonPeak, anonRSS())
			return true
		})
	}()
	return h
}

// every calls fn every interval until stop is closed or fn returns false.
func every(interval time.Duration, stop <-chan struct{}, fn func() bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if !fn() {
				return
			}
		}
	}
}

// Stop ends the sampling and returns the peaks of the heap and of anonRSS.
func (h *heapSampler) Stop() (heap, anon int64) {
	close(h.stop)
	h.done.Wait()
	return max(h.peak, heapObjects()), max(h.anonPeak, anonRSS())
}

// dbSize is the size of the database: SQLite's page_count × page_size (the pages of its
// WAL included, which the file sizes would count only after a checkpoint), PostgreSQL's
// pg_database_size, MySQL's data and index length of the schema's tables (InnoDB's
// statistics: run ANALYZE TABLE first for a current figure).
func dbSize(ctx context.Context, db *database.DB) (int64, error) {
	switch db.Dialect {
	case database.SQLite:
		return scanSize(ctx, db, `SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`)
	case database.Postgres:
		return scanSize(ctx, db, `SELECT pg_database_size(current_database())`)
	case database.MySQL:
		return scanSize(ctx, db, `SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE()`)
	}
	return 0, fmt.Errorf("unknown dialect %q", db.Dialect)
}

func scanSize(ctx context.Context, db *database.DB, q string) (int64, error) {
	var n int64
	if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("database size: %w", err)
	}
	return n, nil
}
