package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/eventstore/logsub"
)

// ConsumerFunc handles one ledger event for a background consumer. It must be idempotent:
// delivery is at least once. ctx stays alive during a graceful shutdown until the
// shutdown's timeout, so that the event in flight can finish.
type ConsumerFunc func(ctx context.Context, rec eventstore.Record) error

// handlerExitGrace is how long a shutdown waits for a handler to return after its context
// was cancelled.
const handlerExitGrace = 5 * time.Second

// poisonTopic names the poison queue for watermill; PoisonPublisher writes consumer_poison.
const poisonTopic = "consumer_poison"

// BackgroundConfig configures a Background. The zero value takes every default.
type BackgroundConfig struct {
	// Subscriber configures the ledger subscriber (poll interval, batch size, nack delay).
	// Its CloseTimeout defaults to CloseTimeout; its OnOffset is replaced.
	Subscriber logsub.Config
	// MaxRetries is how often a failing handler is retried before its event is recorded
	// in consumer_poison and the consumer moves on. Default 3.
	MaxRetries int
	// RetryInterval is the first pause between retries; it doubles up to 5 s. Default 100 ms.
	RetryInterval time.Duration
	// CloseTimeout is how long a shutdown waits for the handlers in flight before it
	// cancels their context; their events are then delivered again on the next start.
	// Default 30 s.
	CloseTimeout time.Duration
	// Logger receives the router's log; slog.Default() when nil.
	Logger *slog.Logger
	// Registerer receives the consumer metrics; none are registered when nil.
	Registerer prometheus.Registerer
}

func (c *BackgroundConfig) setDefaults() {
	if c.MaxRetries == 0 {
		c.MaxRetries = 3
	}
	if c.RetryInterval == 0 {
		c.RetryInterval = 100 * time.Millisecond
	}
	if c.CloseTimeout == 0 {
		c.CloseTimeout = 30 * time.Second
	}
	if c.Subscriber.CloseTimeout == 0 {
		c.Subscriber.CloseTimeout = c.CloseTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Subscriber.Logger == nil {
		c.Subscriber.Logger = c.Logger
	}
}

// Validate reports every invalid setting at once.
func (c BackgroundConfig) Validate() error {
	var errs []error
	if c.MaxRetries < 0 {
		errs = append(errs, fmt.Errorf("max retries %d is negative", c.MaxRetries))
	}
	if c.RetryInterval < 0 {
		errs = append(errs, fmt.Errorf("retry interval %v is negative", c.RetryInterval))
	}
	if c.CloseTimeout < 0 {
		errs = append(errs, fmt.Errorf("close timeout %v is negative", c.CloseTimeout))
	}
	return errors.Join(append(errs, c.Subscriber.Validate())...)
}

// Background runs the consumers that follow the ledger: each is a handler of a watermill
// Router fed by a logsub.Subscriber, with its own offset. Failing handlers are retried
// (middleware.Retry), panics are recovered (middleware.Recoverer), and an event that still
// fails is recorded in consumer_poison (middleware.PoisonQueue with logsub.PoisonPublisher)
// so that the consumer moves on instead of stopping the line; a poisoned event is never
// dropped silently.
type Background struct {
	sub     *logsub.Subscriber
	router  *message.Router
	metrics *consumerMetrics
}

// NewBackground returns a Background over store's ledger. Add handlers, then Run it.
func NewBackground(store *eventstore.Store, cfg BackgroundConfig) (*Background, error) {
	if store == nil {
		return nil, errors.New("app: background needs a store")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("background: %w", err)
	}
	cfg.setDefaults()
	metrics := newConsumerMetrics(store)
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(metrics); err != nil {
			return nil, fmt.Errorf("background metrics: %w", err)
		}
	}
	cfg.Subscriber.OnOffset = metrics.setPosition
	sub, err := logsub.NewSubscriber(store, cfg.Subscriber)
	if err != nil {
		return nil, err
	}
	router, err := newRouter(store, cfg, metrics)
	if err != nil {
		return nil, err
	}
	return &Background{sub: sub, router: router, metrics: metrics}, nil
}

func newRouter(store *eventstore.Store, cfg BackgroundConfig, metrics *consumerMetrics) (*message.Router, error) {
	logger := watermill.NewSlogLogger(cfg.Logger)
	// The subscriber gives up on a handler in flight after CloseTimeout and cancels its
	// context; the router waits a little longer, for the handler to return.
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: cfg.Subscriber.CloseTimeout + handlerExitGrace}, logger)
	if err != nil {
		return nil, err
	}
	pub, err := logsub.NewPoisonPublisher(store.DB())
	if err != nil {
		return nil, err
	}
	poison, err := middleware.PoisonQueueWithFilter(pub, poisonTopic, poisonable)
	if err != nil {
		return nil, err
	}
	retry := middleware.Retry{
		MaxRetries: cfg.MaxRetries, InitialInterval: cfg.RetryInterval,
		MaxInterval: max(5*time.Second, cfg.RetryInterval), Multiplier: 2, Logger: logger,
	}
	// The first middleware is the outermost.
	router.AddMiddleware(metrics.observe, poison, retry.Middleware, middleware.Recoverer)
	return router, nil
}

// poisonable tells a handler's failure from a shutdown: an event interrupted by a
// cancelled context is delivered again on the next start, not poisoned.
func poisonable(err error) bool { return !errors.Is(err, context.Canceled) }

// AddHandler registers fn as the consumer name (also its offset's key in
// consumer_offsets). Add every handler before Run. A second handler of the same name, or
// a nil fn, panics.
func (b *Background) AddHandler(name string, fn ConsumerFunc) {
	if fn == nil {
		panic("app: nil handler for consumer " + name)
	}
	b.metrics.add(name)
	b.router.AddConsumerHandler(name, name, b.sub, b.metrics.count(name, func(msg *message.Message) error {
		rec, err := logsub.Record(msg)
		if err != nil {
			return err
		}
		return fn(msg.Context(), rec)
	}))
}

// Run delivers events to the handlers until ctx is done, then shuts down gracefully: the
// events in flight finish (within CloseTimeout) and their offsets are saved. It returns
// early with an error when the router cannot start.
func (b *Background) Run(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- b.router.Run(context.WithoutCancel(ctx)) }()
	select {
	case err := <-done:
		return errors.Join(err, b.sub.Close())
	case <-ctx.Done():
	}
	// A Close before the handlers started would wait for them in vain.
	select {
	case err := <-done:
		return errors.Join(err, b.sub.Close())
	case <-b.router.Running():
	}
	closeErr := b.router.Close()
	return errors.Join(<-done, closeErr, b.sub.Close())
}

// Running is closed once the consumers have subscribed.
func (b *Background) Running() <-chan struct{} { return b.router.Running() }

// consumerMetrics are the Prometheus metrics of the consumers, labelled by consumer. The
// position and lag gauges are computed when scraped, from the last saved offsets and the
// ledger head.
type consumerMetrics struct {
	store    *eventstore.Store
	handled  *prometheus.CounterVec
	failures *prometheus.CounterVec
	poisoned *prometheus.CounterVec
	delay    *prometheus.HistogramVec
	posDesc  *prometheus.Desc
	lagDesc  *prometheus.Desc

	mu        sync.Mutex
	positions map[string]int64
}

func newConsumerMetrics(store *eventstore.Store) *consumerMetrics {
	labels := []string{"consumer"}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	return &consumerMetrics{
		store:    store,
		handled:  counter("mailledger_consumer_handled_total", "Events a consumer handled successfully."),
		failures: counter("mailledger_consumer_failures_total", "Failed handler attempts, retries included."),
		poisoned: counter("mailledger_consumer_poisoned_total", "Events recorded in consumer_poison after every retry failed."),
		delay: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mailledger_consumer_delay_seconds",
			Help:    "Time from an event's commit (recorded_at) to the start of its handler.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16), // 1 ms … 33 s
		}, labels),
		posDesc: prometheus.NewDesc("mailledger_consumer_position",
			"Last ledger position a consumer acked (its saved offset).", labels, nil),
		lagDesc: prometheus.NewDesc("mailledger_consumer_lag_events",
			"Events in the ledger that a consumer has not finished yet (head - position).", labels, nil),
		positions: map[string]int64{},
	}
}

// add makes a consumer's series visible before its first event.
func (m *consumerMetrics) add(consumer string) {
	m.handled.WithLabelValues(consumer)
	m.failures.WithLabelValues(consumer)
	m.poisoned.WithLabelValues(consumer)
	m.delay.WithLabelValues(consumer)
	m.setPosition(consumer, 0)
}

func (m *consumerMetrics) setPosition(consumer string, position int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.positions[consumer] = max(m.positions[consumer], position)
}

// observe is the outermost middleware: it times the delay before the first attempt and
// counts the outcome after the retries and the poison queue.
func (m *consumerMetrics) observe(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		consumer := msg.Metadata.Get(logsub.MetaConsumer)
		if at, err := logsub.RecordedAt(msg); err == nil {
			m.delay.WithLabelValues(consumer).Observe(time.Since(at).Seconds())
		}
		out, err := h(msg)
		switch {
		case err != nil: // nacked: delivered again later
		case msg.Metadata.Get(middleware.ReasonForPoisonedKey) != "":
			m.poisoned.WithLabelValues(consumer).Inc()
		default:
			m.handled.WithLabelValues(consumer).Inc()
		}
		return out, err
	}
}

// count wraps a handler to count its failed attempts, panics included.
func (m *consumerMetrics) count(consumer string, h message.NoPublishHandlerFunc) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		failed := true
		defer func() {
			if failed {
				m.failures.WithLabelValues(consumer).Inc()
			}
		}()
		err := h(msg)
		failed = err != nil
		return err
	}
}

// Describe implements prometheus.Collector.
func (m *consumerMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range []prometheus.Collector{m.handled, m.failures, m.poisoned, m.delay} {
		c.Describe(ch)
	}
	ch <- m.posDesc
	ch <- m.lagDesc
}

// Collect implements prometheus.Collector. The lag is left out when the head cannot be
// read within two seconds.
func (m *consumerMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range []prometheus.Collector{m.handled, m.failures, m.poisoned, m.delay} {
		c.Collect(ch)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	head, headErr := m.store.Head(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	for consumer, pos := range m.positions {
		ch <- prometheus.MustNewConstMetric(m.posDesc, prometheus.GaugeValue, float64(pos), consumer)
		if headErr == nil {
			ch <- prometheus.MustNewConstMetric(m.lagDesc, prometheus.GaugeValue, float64(max(head.Size-pos, 0)), consumer)
		}
	}
}
