package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
)

// payload is a typical compliance event: ids, a data subject's address, counts and a
// digest, about 300 bytes of canonical JSON.
type payload struct {
	RequestID string `json:"request_id"`
	Subject   string `json:"subject"`
	Basis     string `json:"basis"`
	Messages  int    `json:"messages"`
	Mailboxes int    `json:"mailboxes"`
	Reason    string `json:"reason"`
	Digest    string `json:"digest"`
}

// workload hands out streams round-robin, tracking each stream's version so that every
// Append passes the optimistic concurrency check with an exact expected version.
type workload struct {
	prefix   string
	streams  int
	next     int
	versions map[string]int64
	seq      int
}

func newWorkload(prefix string, streams int) *workload {
	return &workload{prefix: prefix, streams: streams, versions: map[string]int64{}}
}

// nextAppend returns the next stream, its expected version and n new events for it.
func (w *workload) nextAppend(n int) (eventstore.Stream, int64, []eventstore.NewEvent) {
	id := fmt.Sprintf("%s-%06d", w.prefix, w.next%w.streams)
	w.next++
	expected := w.versions[id]
	w.versions[id] += int64(n)
	events := make([]eventstore.NewEvent, n)
	for i := range events {
		events[i] = w.event()
	}
	return eventstore.Stream{ID: id, Type: "bench_case", TenantID: "tenant-0001"}, expected, events
}

func (w *workload) event() eventstore.NewEvent {
	w.seq++
	p := payload{
		RequestID: fmt.Sprintf("GDPR-2026-%08d", w.seq), Subject: "alice.example@example.org",
		Basis: "GDPR Art. 17(1)(a)", Messages: 1000 + w.seq%9000, Mailboxes: 1 + w.seq%7,
		Reason: "data subject request received by e-mail; identity checked by the DPO",
		Digest: fmt.Sprintf("%064x", w.seq),
	}
	md := domain.Metadata{Actor: "dpo@example.org", ClientIP: "192.0.2.10",
		UserAgent: "mailledger-bench/1", CorrelationID: fmt.Sprintf("corr-%08d", w.seq)}
	return eventstore.NewEvent{Type: "bench.case_assessed", SchemaVersion: 1, Payload: p, Metadata: md}
}

// phaseTimes is the time the ledger and the two plain inserts took for the same events.
type phaseTimes struct {
	events int
	ledger time.Duration
	plain  time.Duration // one INSERT statement per transaction
	rows   time.Duration // one INSERT statement per row; 0 when not measured (1 row per tx)
}

func (p *phaseTimes) add(q phaseTimes) {
	p.events += q.events
	p.ledger += q.ledger
	p.plain += q.plain
	p.rows += q.rows
}

// ratio is the ledger's rate over the plain insert's: plain time over ledger time.
func (p phaseTimes) ratio() float64 { return p.plain.Seconds() / p.ledger.Seconds() }

// rowsRatio is the ledger's rate over the row-by-row plain insert's.
func (p phaseTimes) rowsRatio() float64 { return p.rows.Seconds() / p.ledger.Seconds() }

// pendingAppend is one Append call, built before the clock starts.
type pendingAppend struct {
	stream   eventstore.Stream
	expected int64
	events   []eventstore.NewEvent
}

// round appends txs transactions of perTx events through the store, then inserts the very
// records the store returned into the baseline tables with the same transaction shape
// (one statement per transaction, then, when perTx > 1, one statement per row), and
// times each part. Building the events is not timed; canonicalizing and hashing them is,
// as part of Append.
func round(ctx context.Context, store *eventstore.Store, w *workload, txs, perTx int) (phaseTimes, error) {
	pending := make([]pendingAppend, txs)
	for i := range pending {
		p := &pending[i]
		p.stream, p.expected, p.events = w.nextAppend(perTx)
	}
	batches := make([][]eventstore.Record, 0, txs)
	start := time.Now()
	for _, p := range pending {
		recs, err := store.Append(ctx, p.stream, p.expected, p.events...)
		if err != nil {
			return phaseTimes{}, fmt.Errorf("append: %w", err)
		}
		batches = append(batches, recs)
	}
	ledger := time.Since(start)
	t := phaseTimes{events: txs * perTx, ledger: ledger}
	var err error
	if t.plain, err = timePlain(ctx, store.DB(), batches, insertPlain); err != nil || perTx == 1 {
		return t, err
	}
	t.rows, err = timePlain(ctx, store.DB(), batches, insertPlainRows)
	return t, err
}

func timePlain(ctx context.Context, db *database.DB, batches [][]eventstore.Record,
	insert func(context.Context, *database.DB, []eventstore.Record) error) (time.Duration, error) {
	start := time.Now()
	for _, recs := range batches {
		if err := insert(ctx, db, recs); err != nil {
			return 0, fmt.Errorf("plain insert: %w", err)
		}
	}
	return time.Since(start), nil
}
