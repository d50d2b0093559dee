package smtpd

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailledger/mailledger/archive"
)

// errStopped answers a message that reached the committer after it stopped.
var errStopped = errors.New("smtp receiver is stopping")

// commitJob is one received message: its prepared copies (one per tenant), committed
// together or not at all.
type commitJob struct {
	batch []*archive.Prepared
	size  int
	done  chan commitOutcome // buffered: the committer never waits for the session
}

type commitOutcome struct {
	results []archive.Result
	err     error
}

// committer is the group commit: a goroutine takes the messages that arrived while the
// previous commit ran and commits them with one archive.Commit (one transaction, the
// files fsynced), then answers each session. Several such goroutines may run (Config.Committers):
// while one commit waits for the disk, the next gathers what arrives meanwhile.
type committer struct {
	arc      *archive.Archive
	jobs     chan *commitJob
	maxMsgs  int
	maxBytes int
	linger   time.Duration // how long a commit waits for one more message (CommitLinger)
	// sessions counts the open SMTP sessions, waiting those whose message the committer
	// holds (handed over, not answered yet). A message can only come from one of the
	// others (or from a new connection), so a commit lingers only while there are others.
	sessions, waiting atomic.Int64
	metrics           *metrics
	logger            *slog.Logger

	ctx     context.Context // of the commits; cancelled only by a hard stop
	cancel  context.CancelFunc
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

func newCommitter(arc *archive.Archive, maxMsgs, maxBytes int, linger time.Duration, committers int, m *metrics, logger *slog.Logger) *committer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &committer{arc: arc, jobs: make(chan *commitJob, maxMsgs), maxMsgs: maxMsgs, maxBytes: maxBytes, linger: linger,
		metrics: m, logger: logger, ctx: ctx, cancel: cancel, stop: make(chan struct{}), stopped: make(chan struct{})}
	if committers <= 0 {
		// 2 on MySQL (8 clients: 1.2 times the messages a second of one), 1 elsewhere:
		// SQLite has one writer, so a second commit would only wait for the first with fewer
		// messages than it could have gathered meanwhile, and on PostgreSQL a second made no
		// difference (docs/performance.md, "SMTP ingest").
		committers = arc.Committers()
	}
	var wg sync.WaitGroup
	for range committers {
		wg.Add(1)
		go func() { defer wg.Done(); c.run() }()
	}
	go func() { wg.Wait(); close(c.stopped) }()
	return c
}

// submit hands the job to the committer and waits for its outcome. A job the committer
// will never take (it stopped) fails with errStopped.
func (c *committer) submit(j *commitJob) ([]archive.Result, error) {
	j.done = make(chan commitOutcome, 1)
	c.waiting.Add(1) // until answer, or here if the job is never taken
	select {
	case c.jobs <- j:
	case <-c.stopped:
		c.waiting.Add(-1)
		return nil, errStopped
	}
	select {
	case out := <-j.done:
		return out.results, out.err
	case <-c.stopped:
		select { // answered just before the stop?
		case out := <-j.done:
			return out.results, out.err
		default:
			return nil, errStopped
		}
	}
}

// answer gives j its outcome; j's session no longer waits for the committer.
func (c *committer) answer(j *commitJob, out commitOutcome) {
	c.waiting.Add(-1)
	j.done <- out
}

func (c *committer) sessionStarted() { c.sessions.Add(1) }
func (c *committer) sessionEnded()   { c.sessions.Add(-1) }

// close stops the committer once it has committed every job already handed over; with
// hard set it cancels a running commit instead.
func (c *committer) close(hard bool) {
	if hard {
		c.cancel()
	}
	c.once.Do(func() { close(c.stop) })
	<-c.stopped
	c.cancel()
}

func (c *committer) run() {
	for {
		select {
		case j := <-c.jobs:
			c.commit(c.gather(j))
		case <-c.stop:
			for { // what was handed over before the stop is still committed
				select {
				case j := <-c.jobs:
					c.commit(c.gather(j))
				default:
					return
				}
			}
		}
	}
}

// gather adds to first the jobs waiting now, and those that arrive within the linger of
// the last one, up to the batch bounds: concurrent sessions finish their DATA moments
// apart, and one more message in a commit costs far less than a commit of its own. It
// lingers only while some open session has no message in the batch: when every session's
// message is in it (8 clients each awaiting its 250, say), nothing else can come soon, and
// a linger would only delay all of them (docs/performance.md, "SMTP ingest").
func (c *committer) gather(first *commitJob) []*commitJob {
	jobs, msgs, bytes := []*commitJob{first}, len(first.batch), first.size
	var wait *time.Timer
	defer func() {
		if wait != nil {
			wait.Stop()
		}
	}()
	for msgs < c.maxMsgs && bytes < c.maxBytes {
		select {
		case j := <-c.jobs:
			jobs = append(jobs, j)
			msgs, bytes = msgs+len(j.batch), bytes+j.size
			continue
		default:
		}
		if c.linger <= 0 || c.sessions.Load() <= c.waiting.Load() {
			return jobs
		}
		if wait == nil {
			wait = time.NewTimer(c.linger)
		} else {
			wait.Reset(c.linger)
		}
		select {
		case j := <-c.jobs:
			jobs = append(jobs, j)
			msgs, bytes = msgs+len(j.batch), bytes+j.size
		case <-wait.C:
			return jobs
		case <-c.stop:
			return jobs
		}
	}
	return jobs
}

// commit commits jobs in one transaction. When that fails and there were several, each
// is tried alone, so that a message the database refuses fails alone. A message alone is
// tried twice: a commit running at the same time (another committer, an import) may have
// held the same message, and the second transaction then finds it stored.
func (c *committer) commit(jobs []*commitJob) {
	var all []*archive.Prepared
	for _, j := range jobs {
		all = append(all, j.batch...)
	}
	c.metrics.batch(len(jobs))
	results, err := c.arc.Commit(c.ctx, all)
	if err == nil {
		for _, j := range jobs {
			c.answer(j, commitOutcome{results: results[:len(j.batch)]})
			results = results[len(j.batch):]
		}
		return
	}
	if len(jobs) > 1 {
		c.logger.Warn("smtp group commit failed, committing its messages one by one", "messages", len(jobs), "error", err.Error())
	}
	for _, j := range jobs {
		var res []archive.Result
		if len(jobs) > 1 { // a lone job's first try was the group commit itself
			c.metrics.batch(1)
			res, err = c.arc.Commit(c.ctx, j.batch)
		}
		if err != nil && c.ctx.Err() == nil {
			c.metrics.batch(1)
			res, err = c.arc.Commit(c.ctx, j.batch)
		}
		c.answer(j, commitOutcome{results: res, err: err})
	}
}
