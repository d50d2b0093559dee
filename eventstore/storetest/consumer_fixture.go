package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/eventstore/logsub"
)

type consumerFixture struct {
	t     *testing.T
	ctx   context.Context
	db    *database.DB
	store *eventstore.Store
}

func newConsumerFixture(t *testing.T, newDB Factory, opts eventstore.Options) *consumerFixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	db := newDB(t)
	store, err := eventstore.New(db, opts)
	require.NoError(t, err)
	return &consumerFixture{t: t, ctx: ctx, db: db, store: store}
}

// appendEvents appends n events of type "consumer.tested" in batches of up to 7 over three
// streams.
func (f *consumerFixture) appendEvents(n int) []eventstore.Record {
	f.t.Helper()
	var out []eventstore.Record
	for len(out) < n {
		batch := make([]eventstore.NewEvent, min(7, n-len(out)))
		for i := range batch {
			batch[i] = eventstore.NewEvent{Type: "consumer.tested", SchemaVersion: 1,
				Payload: map[string]any{"seq": len(out) + i + 1}}
		}
		s := eventstore.Stream{ID: fmt.Sprintf("consumer-%d", len(out)%3), Type: "test_stream", TenantID: "tenant-c"}
		recs, err := f.store.Append(f.ctx, s, eventstore.AnyVersion, batch...)
		require.NoError(f.t, err)
		out = append(out, recs...)
	}
	return out
}

// subscriber returns a Subscriber on the fixture's store, closed after the test. Unless cfg
// says otherwise, a stop gives up on an unacked message after 200 ms.
func (f *consumerFixture) subscriber(cfg logsub.Config) *logsub.Subscriber {
	f.t.Helper()
	if cfg.CloseTimeout == 0 {
		cfg.CloseTimeout = 200 * time.Millisecond
	}
	sub, err := logsub.NewSubscriber(f.store, cfg)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { _ = sub.Close() })
	return sub
}

func (f *consumerFixture) subscribe(ctx context.Context, sub *logsub.Subscriber, consumer string) <-chan *message.Message {
	f.t.Helper()
	ch, err := sub.Subscribe(ctx, consumer)
	require.NoError(f.t, err, "subscribe %s", consumer)
	return ch
}

func (f *consumerFixture) offset(consumer string) int64 {
	f.t.Helper()
	p, err := logsub.Offset(f.ctx, f.db, consumer)
	require.NoError(f.t, err)
	return p
}

func (f *consumerFixture) requireOffset(consumer string, want int64) {
	f.t.Helper()
	require.Eventually(f.t, func() bool { return f.offset(consumer) == want }, waitMessage, 5*time.Millisecond,
		"offset of %s never reached %d", consumer, want)
}

// nextMessage returns the next message of ch, failing when none comes within d.
func nextMessage(t *testing.T, ch <-chan *message.Message, d time.Duration) *message.Message {
	t.Helper()
	select {
	case msg, ok := <-ch:
		require.True(t, ok, "subscription closed; want a message")
		return msg
	case <-time.After(d):
		t.Fatalf("no message within %v", d)
		return nil
	}
}

// requireQuiet fails when ch yields a message within d.
func requireQuiet(t *testing.T, ch <-chan *message.Message, d time.Duration) {
	t.Helper()
	select {
	case msg, open := <-ch:
		t.Fatalf("got message %v (channel open: %v); want none for %v", msg, open, d)
	case <-time.After(d):
	}
}

// requireEnded fails unless ch is closed within waitMessage without another message.
func requireEnded(t *testing.T, ch <-chan *message.Message) {
	t.Helper()
	select {
	case msg, ok := <-ch:
		require.False(t, ok, "got message %v; want the subscription closed", msg)
	case <-time.After(waitMessage):
		t.Fatal("subscription not closed")
	}
}

func positionOf(t *testing.T, msg *message.Message) int64 {
	t.Helper()
	p, err := logsub.Position(msg)
	require.NoError(t, err)
	return p
}

// ackAll acks messages until one at position last, returning the positions seen.
func ackAll(t *testing.T, ch <-chan *message.Message, last int64) []int64 {
	t.Helper()
	var seen []int64
	for {
		msg := nextMessage(t, ch, waitMessage)
		seen = append(seen, positionOf(t, msg))
		msg.Ack()
		if seen[len(seen)-1] >= last {
			return seen
		}
	}
}

func positionsFrom(from, to int64) (out []int64) {
	for p := from; p <= to; p++ {
		out = append(out, p)
	}
	return out
}
