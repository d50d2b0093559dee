package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/eventstore/logsub"
)

// RunConsumer runs the contract of the durable consumer (eventstore/logsub) on fresh
// databases from newDB: in-order delivery, offsets that move only after an ack, redelivery
// after a nack or a stop, independent consumers, prompt in-process wake-up, polling for
// other writers, and the poison table.
func RunConsumer(t *testing.T, newDB Factory) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Factory)
	}{
		{"DeliversInOrderOnce", testConsumerInOrder},
		{"DeliversUpcastPayload", testConsumerUpcast},
		{"OffsetMovesOnlyAfterAck", testConsumerOffsetAfterAck},
		{"NackRedelivers", testConsumerNack},
		{"RestartAfterStop", testConsumerRestart},
		{"CloseFinishesMessageInFlight", testConsumerCloseFinishes},
		{"IndependentConsumers", testConsumerIndependent},
		{"WakesWithoutPolling", testConsumerWakes},
		{"PollsForOtherWriters", testConsumerPolls},
		{"OneSubscriptionPerConsumer", testConsumerExclusive},
		{"FreeAsSoonAsEnded", testConsumerFreeWhenEnded},
		{"PoisonQueueRecords", testConsumerPoison},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newDB) })
	}
}

// waitMessage bounds every wait for a message that must come.
const waitMessage = 10 * time.Second

// testConsumerInOrder: every event arrives once, in order, carrying its whole record.
func testConsumerInOrder(t *testing.T, newDB Factory) {
	f := newConsumerFixture(t, newDB, eventstore.Options{})
	stored := f.appendEvents(40)
	ch := f.subscribe(f.ctx, f.subscriber(logsub.Config{}), "in-order")
	for i := range stored {
		msg := nextMessage(t, ch, waitMessage)
		assert.Equal(t, fmt.Sprint(stored[i].Position), msg.UUID, "message UUID is the position")
		got, err := logsub.Record(msg)
		require.NoError(t, err)
		assert.Equal(t, stored[i], got, "record at position %d", stored[i].Position)
		require.True(t, msg.Ack())
	}
	requireQuiet(t, ch, 300*time.Millisecond)
	f.requireOffset("in-order", 40)
}

// testConsumerUpcast: the payload is delivered upcast; the stored bytes travel along.
func testConsumerUpcast(t *testing.T, newDB Factory) {
	up := eventstore.NewUpcasters()
	up.Register("consumer.tested", 1, func(p json.RawMessage) (json.RawMessage, error) {
		var v map[string]any
		if err := json.Unmarshal(p, &v); err != nil {
			return nil, err
		}
		v["upcast"] = true
		return json.Marshal(v)
	})
	f := newConsumerFixture(t, newDB, eventstore.Options{Upcasters: up})
	stored := f.appendEvents(1)
	msg := nextMessage(t, f.subscribe(f.ctx, f.subscriber(logsub.Config{}), "upcast"), waitMessage)
	assert.JSONEq(t, `{"seq":1,"upcast":true}`, string(msg.Payload))
	assert.Equal(t, "2", msg.Metadata.Get(logsub.MetaSchemaVersion))
	got, err := logsub.Record(msg)
	require.NoError(t, err)
	assert.Equal(t, stored[0].Payload, got.Payload, "stored payload")
	assert.Equal(t, 1, got.SchemaVersion)
	assert.Equal(t, 2, got.DataVersion)
	msg.Ack()
}

// testConsumerOffsetAfterAck: one message in flight; the offset waits for its ack.
func testConsumerOffsetAfterAck(t *testing.T, newDB Factory) {
	f := newConsumerFixture(t, newDB, eventstore.Options{})
	f.appendEvents(3)
	ch := f.subscribe(f.ctx, f.subscriber(logsub.Config{}), "acker")
	first := nextMessage(t, ch, waitMessage)
	require.Equal(t, int64(1), positionOf(t, first))
	requireQuiet(t, ch, 300*time.Millisecond)
	assert.Equal(t, int64(0), f.offset("acker"), "offset before the ack")
	first.Ack()
	second := nextMessage(t, ch, waitMessage)
	assert.Equal(t, int64(2), positionOf(t, second))
	assert.Equal(t, int64(1), f.offset("acker"), "offset after the first ack")
	second.Ack()
	f.requireOffset("acker", 2)
}

// testConsumerNack: a nacked message comes again, and the offset stays.
func testConsumerNack(t *testing.T, newDB Factory) {
	f := newConsumerFixture(t, newDB, eventstore.Options{})
	f.appendEvents(2)
	ch := f.subscribe(f.ctx, f.subscriber(logsub.Config{NackDelay: 10 * time.Millisecond}), "nacker")
	first := nextMessage(t, ch, waitMessage)
	first.Nack()
	again := nextMessage(t, ch, waitMessage)
	assert.True(t, first.Equals(again), "redelivered message differs: got %v; want %v", again, first)
	assert.Equal(t, int64(0), f.offset("nacker"))
	again.Ack()
	assert.Equal(t, int64(2), positionOf(t, nextMessage(t, ch, waitMessage)))
	assert.Equal(t, int64(1), f.offset("nacker"))
}

// testConsumerRestart: a consumer stopped (context cancelled, or Close) with a message it
// never acked sees that message again after a restart, then the rest, and nothing is missed.
func testConsumerRestart(t *testing.T, newDB Factory) {
	for _, how := range []string{"cancel", "close"} {
		t.Run(how, func(t *testing.T) {
			f := newConsumerFixture(t, newDB, eventstore.Options{})
			f.appendEvents(20)
			cfg := logsub.Config{}
			ctx, cancel := context.WithCancel(f.ctx)
			defer cancel()
			sub := f.subscriber(cfg)
			ch := f.subscribe(ctx, sub, "restarter")
			seen := ackAll(t, ch, 7)
			unacked := nextMessage(t, ch, waitMessage)
			seen = append(seen, positionOf(t, unacked))
			if how == "cancel" {
				cancel()
			} else {
				require.NoError(t, sub.Close())
			}
			requireEnded(t, ch)
			assert.Equal(t, int64(7), f.offset("restarter"), "offset after the stop")
			assert.ErrorIs(t, unacked.Context().Err(), context.Canceled, "abandoned message's context")

			seen = append(seen, ackAll(t, f.subscribe(f.ctx, f.subscriber(cfg), "restarter"), 20)...)
			want := append(positionsFrom(1, 8), positionsFrom(8, 20)...)
			assert.Equal(t, want, seen, "every event once, the unacked one twice")
			f.requireOffset("restarter", 20)
		})
	}
}

// testConsumerCloseFinishes: Close waits for the message in flight and saves its offset.
func testConsumerCloseFinishes(t *testing.T, newDB Factory) {
	f := newConsumerFixture(t, newDB, eventstore.Options{})
	f.appendEvents(5)
	sub := f.subscriber(logsub.Config{CloseTimeout: time.Minute})
	ch := f.subscribe(f.ctx, sub, "graceful")
	msg := nextMessage(t, ch, waitMessage)
	closed := make(chan error, 1)
	go func() { closed <- sub.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned before the message in flight was acked")
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, msg.Context().Err(), "in-flight message's context cancelled during the grace period")
	msg.Ack()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(waitMessage):
		t.Fatal("Close did not return after the ack")
	}
	requireEnded(t, ch)
	assert.Equal(t, int64(1), f.offset("graceful"))
	_, err := sub.Subscribe(f.ctx, "graceful")
	assert.ErrorIs(t, err, logsub.ErrClosed)
}

// testConsumerIndependent: two consumers keep their own offsets.
func testConsumerIndependent(t *testing.T, newDB Factory) {
	f := newConsumerFixture(t, newDB, eventstore.Options{})
	f.appendEvents(10)
	sub := f.subscriber(logsub.Config{})
	ctxB, stopB := context.WithCancel(f.ctx)
	assert.Equal(t, positionsFrom(1, 10), ackAll(t, f.subscribe(f.ctx, sub, "alpha"), 10))
	chB := f.subscribe(ctxB, sub, "beta")
	assert.Equal(t, positionsFrom(1, 3), ackAll(t, chB, 3))
	f.requireOffset("beta", 3)
	stopB()
	for msg := range chB { // a message sent after the stop goes back
		msg.Nack()
	}
	f.requireOffset("alpha", 10)
	assert.Equal(t, int64(3), f.offset("beta"))
	assert.Equal(t, int64(4), positionOf(t, nextMessage(t, f.subscribe(f.ctx, sub, "beta"), waitMessage)))
}

// testConsumerWakes: with a 10 s poll interval, appends still arrive within 1 s.
func testConsumerWakes(t *testing.T, newDB Factory) {
	f := newConsumerFixture(t, newDB, eventstore.Options{})
	ch := f.subscribe(f.ctx, f.subscriber(logsub.Config{PollInterval: 10 * time.Second}), "prompt")
	for i := int64(1); i <= 5; i++ {
		time.Sleep(100 * time.Millisecond) // let the subscription fall idle
		f.appendEvents(1)
		start := time.Now()
		msg := nextMessage(t, ch, time.Second)
		assert.Equal(t, i, positionOf(t, msg))
		assert.Less(t, time.Since(start), time.Second)
		msg.Ack()
	}
}

// testConsumerPolls: an append through another Store (another process) is found by polling.
func testConsumerPolls(t *testing.T, newDB Factory) {
	f := newConsumerFixture(t, newDB, eventstore.Options{})
	ch := f.subscribe(f.ctx, f.subscriber(logsub.Config{PollInterval: 100 * time.Millisecond}), "poller")
	time.Sleep(100 * time.Millisecond)
	other, err := eventstore.New(f.db, eventstore.Options{})
	require.NoError(t, err)
	s := eventstore.Stream{ID: "elsewhere", Type: "test_stream", TenantID: "tenant-c"}
	_, err = other.Append(f.ctx, s, eventstore.NoStream, eventstore.NewEvent{Type: "consumer.tested", SchemaVersion: 1, Payload: map[string]any{}})
	require.NoError(t, err)
	assert.Equal(t, int64(1), positionOf(t, nextMessage(t, ch, 2*time.Second)))
}

// testConsumerExclusive: a consumer runs once per Subscriber; names are checked.
func testConsumerExclusive(t *testing.T, newDB Factory) {
	f := newConsumerFixture(t, newDB, eventstore.Options{})
	sub := f.subscriber(logsub.Config{})
	ctx, cancel := context.WithCancel(f.ctx)
	ch := f.subscribe(ctx, sub, "solo")
	_, err := sub.Subscribe(f.ctx, "solo")
	assert.ErrorIs(t, err, logsub.ErrAlreadySubscribed)
	_, err = sub.Subscribe(f.ctx, "")
	assert.ErrorIs(t, err, logsub.ErrBadConsumer)
	cancel()
	requireEnded(t, ch)
	f.subscribe(f.ctx, sub, "solo") // free again once the first stopped
}

// testConsumerFreeWhenEnded: once a subscription's channel is closed, its consumer name is
// free at once, so a consumer restarted right after its end is accepted (each round races
// the close of the channel against the next Subscribe).
func testConsumerFreeWhenEnded(t *testing.T, newDB Factory) {
	f := newConsumerFixture(t, newDB, eventstore.Options{})
	sub := f.subscriber(logsub.Config{})
	for round := range 50 {
		ctx, cancel := context.WithCancel(f.ctx)
		ch, err := sub.Subscribe(ctx, "restarted")
		require.NoError(t, err, "round %d", round)
		cancel()
		requireEnded(t, ch)
	}
}

// testConsumerPoison: a message the poison-queue middleware gives up on is recorded in
// consumer_poison, and the consumer moves on.
func testConsumerPoison(t *testing.T, newDB Factory) {
	f := newConsumerFixture(t, newDB, eventstore.Options{})
	f.appendEvents(2)
	pub, err := logsub.NewPoisonPublisher(f.db)
	require.NoError(t, err)
	poison, err := middleware.PoisonQueue(pub, "consumer_poison")
	require.NoError(t, err)
	handler := poison(func(*message.Message) ([]*message.Message, error) { return nil, errors.New("boom") })
	ch := f.subscribe(f.ctx, f.subscriber(logsub.Config{}), "poisoned")
	msg := nextMessage(t, ch, waitMessage)
	_, err = handler(msg)
	require.NoError(t, err, "the poison queue absorbs the error")
	msg.Ack()
	assert.Equal(t, int64(2), positionOf(t, nextMessage(t, ch, waitMessage)))
	rows, err := logsub.Poisoned(f.ctx, f.db, "poisoned")
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, int64(1), rows[0].Position)
	assert.Equal(t, "boom", rows[0].Error)
	assert.WithinDuration(t, time.Now(), rows[0].CreatedAt, time.Minute)
	assert.Equal(t, int64(1), f.offset("poisoned"))
}
