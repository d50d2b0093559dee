package main

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mailledger/mailledger/eventstore"
)

// ledgerMetrics counts the ledger's appends for Prometheus.
type ledgerMetrics struct {
	appends  prometheus.Counter
	events   prometheus.Counter
	duration prometheus.Histogram
	head     prometheus.GaugeFunc
	headPos  atomic.Int64
}

var _ eventstore.AppendObserver = (*ledgerMetrics)(nil)

// newLedgerMetrics registers the append metrics with reg.
func newLedgerMetrics(reg prometheus.Registerer) (*ledgerMetrics, error) {
	m := &ledgerMetrics{}
	m.appends = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mailledger_ledger_appends_total", Help: "Committed append transactions.",
	})
	m.events = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mailledger_ledger_events_total", Help: "Events appended to the ledger.",
	})
	m.duration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "mailledger_ledger_append_duration_seconds", Help: "Duration of committed appends.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14), // 0.5 ms … 4 s
	})
	m.head = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mailledger_ledger_head_position", Help: "Position of the newest event in the ledger.",
	}, func() float64 { return float64(m.headPos.Load()) })
	for _, c := range []prometheus.Collector{m.appends, m.events, m.duration, m.head} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ObserveAppend records one committed append of events events, taking d, ending at head.
func (m *ledgerMetrics) ObserveAppend(events int, d time.Duration, head int64) {
	m.appends.Inc()
	m.events.Add(float64(events))
	m.duration.Observe(d.Seconds())
	m.setHead(head)
}

// setHead moves the head position forward; appends of several goroutines may report out
// of order, and the head only grows.
func (m *ledgerMetrics) setHead(head int64) {
	for {
		cur := m.headPos.Load()
		if head <= cur || m.headPos.CompareAndSwap(cur, head) {
			return
		}
	}
}

// newRegistry returns a registry with the Go runtime and process collectors and its
// /metrics handler.
func newRegistry() (*prometheus.Registry, http.Handler) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg, promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}
