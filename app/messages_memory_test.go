package app_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
)

// The memory tests of the message reads run on SQLite only: what they measure is the
// process's heap, which the database does not change.

// textMail is a plain-text message of about size bytes whose lines repeat line.
func textMail(i, size int, line string) archivetest.Mail {
	var body strings.Builder
	for n := 0; body.Len() < size; n++ {
		fmt.Fprintf(&body, "%d %s\r\n", n, line)
	}
	from := fmt.Sprintf("long%d@x.test", i)
	raw := "From: " + from + "\r\nTo: b@y.test\r\nSubject: long " + fmt.Sprint(i) +
		"\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body.String()
	return archivetest.Mail{Raw: []byte(raw), From: from, Recipients: []string{"b@y.test"}}
}

func newMessages(t *testing.T, f *erasureFixture, cfg app.MessagesConfig) *app.Messages {
	t.Helper()
	m, err := app.NewMessages(f.arc, f.store, cfg)
	require.NoError(t, err)
	return m
}

func auditorReader() app.Reader { return app.Reader{Tenant: "acme", Meta: actor("auditor")} }

// heapAlloc is the live heap, sampled (ReadMemStats stops the world briefly).
func heapAlloc() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestConcurrentTextReadsShareTheBudget: 8 concurrent /text reads of a 24 MB message with
// a budget of about one message all succeed, never hold more than the budget, and the
// heap's peak stays near what one read costs (about 7 times the message's size with
// today's parser: 171 MiB measured; without the budget the parses overlap, 365 MiB on two
// busy cores and more on more cores).
func TestConcurrentTextReadsShareTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: 8 parses of a 24 MB message; not with -short")
	}
	const size = 24 << 20
	f := newErasureFixture(t, database.SQLite)
	id := f.archiveMail("acme", []archivetest.Mail{textMail(1, size, "a line of the long message")})[0]
	budget := app.NewMemoryBudget(size + size/4)
	m := newMessages(t, f, app.MessagesConfig{Budget: budget, BudgetWait: time.Minute})
	// The sampled heap holds garbage until the next collection, and on a loaded machine the
	// collector falls behind: collecting at 25 % growth instead of 100 % keeps the peak near
	// what the reads hold (eight unbudgeted reads would still hold several times the bound).
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	runtime.GC()
	base := heapAlloc()
	peakHeap := samplePeak(time.Millisecond, heapAlloc)
	peakBudget := samplePeak(100*time.Microsecond, budget.InUse)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			v, err := m.Text(f.ctx, auditorReader(), id)
			if assert.NoError(t, err) {
				assert.True(t, v.Truncated)
				assert.Len(t, v.Text, app.DefaultMaxTextBytes)
			}
		})
	}
	wg.Wait()
	heap, held := peakHeap()-base, peakBudget()
	t.Logf("peak heap above the start: %d MiB; peak budget held: %d MiB; base %d MiB", heap>>20, held>>20, base>>20)
	assert.LessOrEqual(t, held, budget.Size(), "bytes of the budget held")
	assert.Greater(t, held, int64(size/2), "the sampler saw a read in flight")
	assert.Less(t, heap, int64(10*size), "peak heap above the start; overlapping reads cost several times more")
	assert.Equal(t, int64(0), budget.InUse(), "every byte given back")
}

// TestSlowRawReaderHoldsNoCopy: a client that reads 1 KiB of a 48 MB original and stops
// holds a bounded stream, not the message: the live heap grows by far less than its size,
// and it holds at most archive.StreamMemory of the budget until it closes.
func TestSlowRawReaderHoldsNoCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: a 48 MB message; not with -short")
	}
	const size = 48 << 20
	f := newErasureFixture(t, database.SQLite)
	mail := textMail(2, size, "another line, with a number to keep it from compressing to nothing")
	id := f.archiveMail("acme", []archivetest.Mail{mail})[0]
	budget := app.NewMemoryBudget(64 << 20)
	m := newMessages(t, f, app.MessagesConfig{Budget: budget})
	runtime.GC()
	base := heapAlloc()
	raw, err := m.Raw(f.ctx, auditorReader(), id)
	require.NoError(t, err)
	head := make([]byte, 1024)
	_, err = io.ReadFull(raw, head)
	require.NoError(t, err)
	assert.Equal(t, mail.Raw[:1024], head)
	runtime.GC()
	held := heapAlloc() - base
	t.Logf("live heap of a paused raw read of %d MiB: %d MiB", size>>20, held>>20)
	assert.Less(t, held, int64(size/2), "a paused reader must not hold the message")
	assert.LessOrEqual(t, budget.InUse(), int64(16<<20), "budget held by one stream")
	assert.Greater(t, budget.InUse(), int64(0), "the stream holds its share of the budget")
	rest, err := io.ReadAll(raw)
	require.NoError(t, err)
	assert.Equal(t, len(mail.Raw), len(head)+len(rest))
	require.NoError(t, raw.Close())
	assert.Equal(t, int64(0), budget.InUse(), "closing gives the budget back")
}

// TestReadWaitsThenAnswersBusy: a read waits up to BudgetWait for memory that others hold
// and then fails with ErrBusy; once they give it back, the read goes through.
func TestReadWaitsThenAnswersBusy(t *testing.T) {
	f := newErasureFixture(t, database.SQLite)
	id := f.archiveMail("acme", []archivetest.Mail{textMail(3, 64<<10, "short")})[0]
	budget := app.NewMemoryBudget(32 << 10) // smaller than the message: a read takes all of it
	m := newMessages(t, f, app.MessagesConfig{Budget: budget, BudgetWait: 200 * time.Millisecond})
	raw, err := m.Raw(f.ctx, auditorReader(), id)
	require.NoError(t, err)
	start := time.Now()
	_, err = m.Text(f.ctx, auditorReader(), id)
	assert.ErrorIs(t, err, app.ErrBusy)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "the read waited")
	_, err = m.Raw(f.ctx, auditorReader(), id)
	assert.ErrorIs(t, err, app.ErrBusy)
	go func() {
		time.Sleep(50 * time.Millisecond) // deliberate: give the memory back while the read below waits
		_ = raw.Close()
	}()
	v, err := m.Text(f.ctx, auditorReader(), id)
	require.NoError(t, err, "memory given back within the wait")
	assert.False(t, v.Truncated)

	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	_, err = m.Text(ctx, auditorReader(), id)
	assert.NotErrorIs(t, err, app.ErrBusy, "a cancelled request is not busy")
}

// TestTextIsTruncatedWithAFlag: text past MaxTextBytes is cut at a character boundary
// and flagged; text within it is whole and not flagged.
func TestTextIsTruncatedWithAFlag(t *testing.T) {
	f := newErasureFixture(t, database.SQLite)
	ids := f.archiveMail("acme", []archivetest.Mail{
		textMail(4, 5000, "ünïcödé tëxt ✓"), textMail(5, 500, "short"),
	})
	m := newMessages(t, f, app.MessagesConfig{MaxTextBytes: 1001})
	long, err := m.Text(f.ctx, auditorReader(), ids[0])
	require.NoError(t, err)
	assert.True(t, long.Truncated)
	assert.LessOrEqual(t, len(long.Text), 1001)
	assert.Greater(t, len(long.Text), 990)
	assert.True(t, utf8.ValidString(long.Text), "cut inside a character: %q", long.Text[len(long.Text)-8:])
	short, err := m.Text(f.ctx, auditorReader(), ids[1])
	require.NoError(t, err)
	assert.False(t, short.Truncated)
	assert.Contains(t, short.Text, "short")
}
