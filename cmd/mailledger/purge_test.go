package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
)

// TestPurgeScheduleNeverOverlaps runs the schedule with passes slower than its interval:
// passes run one at a time, the first at once, a failed pass is logged and the schedule
// goes on, and the schedule stops when its context ends.
func TestPurgeScheduleNeverOverlaps(t *testing.T) {
	var running, maxRunning, passes atomic.Int32
	pass := func(ctx context.Context) (archive.PurgeResult, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		if passes.Add(1) == 2 {
			return archive.PurgeResult{Purged: 1}, errors.New("disk on fire")
		}
		select {
		case <-time.After(30 * time.Millisecond):
		case <-ctx.Done():
		}
		return archive.PurgeResult{Purged: 3, HeldBack: 1, ByTenant: map[string]int{"default": 3}}, nil
	}
	logs := &lockedBuffer{}
	s := &purgeSchedule{pass: pass, interval: 10 * time.Millisecond,
		logger: slog.New(slog.NewJSONHandler(logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, s.Run(ctx)) })
	require.Eventually(t, func() bool { return passes.Load() >= 5 }, 5*time.Second, 5*time.Millisecond)
	cancel()
	stopped := make(chan struct{})
	go func() { wg.Wait(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(time.Second):
		t.Fatal("the schedule did not stop within a second of its context ending")
	}
	assert.Equal(t, int32(1), maxRunning.Load(), "passes never overlap")
	out := logs.String()
	assert.Contains(t, out, `"msg":"purge pass","purged":3,"held_back":1,"by_tenant":{"default":3}`)
	assert.Contains(t, out, `"msg":"purge pass failed","purged":1,"error":"disk on fire"`)
	assert.GreaterOrEqual(t, strings.Count(out, `"msg":"purge pass"`), 3, "the schedule goes on after a failure")
}
