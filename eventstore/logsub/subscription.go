package logsub

import (
	"context"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/mailledger/mailledger/eventstore"
)

// saveTimeout bounds one offset update, which runs even while the subscription stops.
const saveTimeout = 10 * time.Second

// subscription is one consumer's delivery loop.
type subscription struct {
	s        *Subscriber
	consumer string
	position int64 // the last acked position
	saved    int64 // the last saved position
	lastSave time.Time
	out      chan *message.Message

	// ctx is done when the subscribe context is done or the Subscriber closes.
	ctx  context.Context
	stop context.CancelFunc
	// handlerCtx is the context of every message: it outlives ctx by up to
	// Config.CloseTimeout, so that the message in flight can finish.
	handlerCtx     context.Context
	cancelHandlers context.CancelFunc
}

type outcome int

const (
	acked outcome = iota
	nacked
	abandoned
)

func newSubscription(ctx context.Context, s *Subscriber, consumer string, position int64) *subscription {
	sub := &subscription{s: s, consumer: consumer, position: position, saved: position, out: make(chan *message.Message)}
	sub.ctx, sub.stop = context.WithCancel(ctx)
	sub.handlerCtx, sub.cancelHandlers = context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-s.closing:
		case <-sub.ctx.Done():
		}
		sub.stop()
	}()
	return sub
}

// run delivers events until the subscription stops.
func (sub *subscription) run() {
	defer sub.finish()
	cfg := sub.s.cfg
	for {
		wake := sub.s.store.Appended() // taken before the read, so no commit is missed
		recs, err := sub.s.store.ReadAll(sub.ctx, sub.position, cfg.BatchSize)
		if err != nil && sub.ctx.Err() == nil {
			cfg.Logger.Error("read ledger for consumer", "consumer", sub.consumer, "after", sub.position, "err", err)
		}
		if len(recs) == 0 {
			sub.flush() // caught up
			if !sub.sleep(cfg.PollInterval, wake) {
				return
			}
			continue
		}
		for i := range recs {
			if !sub.deliver(&recs[i]) {
				return
			}
		}
	}
}

// finish saves the offset and ends the subscription. The consumer's name is freed before
// the channel closes, so that a consumer restarted as soon as it sees the close is
// accepted; Close waits until the channel is closed too.
func (sub *subscription) finish() {
	defer sub.s.wg.Done()
	sub.flush()
	sub.stop()
	sub.cancelHandlers()
	sub.s.release(sub.consumer)
	close(sub.out)
}

// sleep waits for d or for wake; it returns false when the subscription stops first.
func (sub *subscription) sleep(d time.Duration, wake <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-sub.ctx.Done():
		return false
	case <-wake:
		return true
	case <-t.C:
		return true
	}
}

// deliver sends rec until it is acked, then saves the offset. It returns false when the
// subscription stops before the ack.
func (sub *subscription) deliver(rec *eventstore.Record) bool {
	for {
		if sub.ctx.Err() != nil {
			return false
		}
		msg := newMessage(sub.consumer, rec)
		msg.SetContext(sub.handlerCtx)
		if !sub.send(msg) {
			return false
		}
		switch sub.await(msg) {
		case acked:
			sub.position = rec.Position
			if time.Since(sub.lastSave) >= sub.s.cfg.SaveInterval {
				sub.flush()
			}
			return true
		case nacked:
			if !sub.sleep(sub.s.cfg.NackDelay, nil) {
				return false
			}
		case abandoned:
			return false
		}
	}
}

// await waits for msg's ack or nack. Once the subscription stops, it waits at most
// Config.CloseTimeout more, then cancels the handlers' context and abandons msg.
func (sub *subscription) await(msg *message.Message) outcome {
	due, stop := sub.saveDue()
	defer stop()
	for waiting := true; waiting; {
		select {
		case <-msg.Acked():
			return acked
		case <-msg.Nacked():
			return nacked
		case <-due:
			sub.flush()
			due = nil
		case <-sub.ctx.Done():
			waiting = false
		}
	}
	t := time.NewTimer(sub.s.cfg.CloseTimeout)
	defer t.Stop()
	select {
	case <-msg.Acked():
		return acked
	case <-msg.Nacked():
		return abandoned
	case <-t.C:
		sub.s.cfg.Logger.Warn("consumer stopped before its message in flight was acked; it will be delivered again",
			"consumer", sub.consumer, "uuid", msg.UUID)
		sub.cancelHandlers()
		return abandoned
	}
}

// send hands msg to the router, saving a waiting offset by its deadline meanwhile; it
// returns false when the subscription stops first.
func (sub *subscription) send(msg *message.Message) bool {
	due, stop := sub.saveDue()
	defer stop()
	for {
		select {
		case sub.out <- msg:
			return true
		case <-due:
			sub.flush()
			due = nil
		case <-sub.ctx.Done():
			return false
		}
	}
}

// saveDue returns a channel that fires when an acked but unsaved offset is due to be
// saved (nil when none waits), and the function that releases its timer.
func (sub *subscription) saveDue() (<-chan time.Time, func() bool) {
	if sub.position == sub.saved {
		return nil, func() bool { return false }
	}
	t := time.NewTimer(sub.s.cfg.SaveInterval - time.Since(sub.lastSave))
	return t.C, t.Stop
}

// flush saves the last acked position as the consumer's offset, if it is not saved yet. A
// failed update is logged and the subscription goes on: the next save covers it, and a
// crash before then only delivers the acked events again.
func (sub *subscription) flush() {
	position := sub.position
	if position == sub.saved {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(sub.ctx), saveTimeout)
	defer cancel()
	sub.lastSave = time.Now()
	if err := saveOffset(ctx, sub.s.store.DB(), sub.consumer, position); err != nil {
		sub.s.cfg.Logger.Error("save consumer offset", "consumer", sub.consumer, "position", position, "err", err)
		return
	}
	sub.saved = position
	if sub.s.cfg.OnOffset != nil {
		sub.s.cfg.OnOffset(sub.consumer, position)
	}
}
