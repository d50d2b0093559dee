package smtpd

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Reasons of mailledger_smtp_refused_total.
const (
	refusedSize        = "size"        // over SMTP_MAX_MESSAGE_BYTES: 552
	refusedRecipient   = "recipient"   // no tenant for the recipient's domain: 550
	refusedUnparsable  = "unparsable"  // the archive would not take it: 554
	refusedBusy        = "busy"        // SMTP_MAX_INFLIGHT_BYTES reached: 452
	refusedCommit      = "commit"      // the commit failed: 451
	refusedConnections = "connections" // over a connection limit: 421
)

// metrics counts what the receiver does, for Prometheus.
type metrics struct {
	received   prometheus.Counter
	stored     prometheus.Counter
	duplicates prometheus.Counter
	discarded  prometheus.Counter
	refused    *prometheus.CounterVec
	batches    prometheus.Histogram
}

// newMetrics registers the receiver's metrics with reg (none when reg is nil).
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		received: prometheus.NewCounter(prometheus.CounterOpts{Name: "mailledger_smtp_received_total",
			Help: "Messages whose DATA or BDAT was read whole."}),
		stored: prometheus.NewCounter(prometheus.CounterOpts{Name: "mailledger_smtp_stored_total",
			Help: "Messages stored (one per tenant), duplicates not counted."}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Name: "mailledger_smtp_duplicates_total",
			Help: "Messages received that their tenant already had (same SHA-256), not stored again."}),
		discarded: prometheus.NewCounter(prometheus.CounterOpts{Name: "mailledger_smtp_discarded_total",
			Help: "Spam accepted and not stored (SPAM_POLICY=discard)."}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mailledger_smtp_refused_total",
			Help: "Messages, recipients and connections refused, by reason."}, []string{"reason"}),
		batches: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "mailledger_smtp_commit_batch_messages",
			Help:    "Messages committed by one group commit (its count is the number of commits).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.received, m.stored, m.duplicates, m.discarded, m.refused, m.batches} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) refuse(reason string) { m.refused.WithLabelValues(reason).Inc() }

func (m *metrics) batch(messages int) { m.batches.Observe(float64(messages)) }
