package logsub

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/mailledger/mailledger/database"
)

// maxPoisonError bounds the stored error text (a recovered panic carries a stack trace).
const maxPoisonError = 8000

// PoisonPublisher is the publisher to give watermill's middleware.PoisonQueue: instead of
// a broker topic, it records each poisoned message in consumer_poison (consumer, position,
// error, created_at). A poisoned event is thus recorded for an operator to act on, never
// silently dropped, while its consumer moves on. The topic is ignored.
type PoisonPublisher struct {
	db *database.DB
}

var _ message.Publisher = (*PoisonPublisher)(nil)

// NewPoisonPublisher returns a PoisonPublisher writing to db.
func NewPoisonPublisher(db *database.DB) (*PoisonPublisher, error) {
	if db == nil {
		return nil, fmt.Errorf("logsub: nil database")
	}
	return &PoisonPublisher{db: db}, nil
}

// Publish records msgs, which must be ledger event messages, as poisoned.
func (p *PoisonPublisher) Publish(_ string, msgs ...*message.Message) error {
	for _, msg := range msgs {
		if err := p.record(msg); err != nil {
			return err
		}
	}
	return nil
}

// Close does nothing: every Publish is written before it returns.
func (p *PoisonPublisher) Close() error { return nil }

func (p *PoisonPublisher) record(msg *message.Message) error {
	position, err := Position(msg)
	if err != nil {
		return err
	}
	consumer := msg.Metadata.Get(MetaConsumer)
	if consumer == "" {
		consumer = msg.Metadata.Get(middleware.PoisonedTopicKey)
	}
	reason := truncate(msg.Metadata.Get(middleware.ReasonForPoisonedKey), maxPoisonError)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(msg.Context()), saveTimeout)
	defer cancel()
	err = p.db.InTx(ctx, func(tx *database.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO consumer_poison (consumer, position, error, created_at) VALUES (?, ?, ?, ?)`,
			consumer, position, reason, database.TimeArg(tx.Dialect, time.Now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("record poisoned event %d of %s: %w", position, consumer, err)
	}
	return nil
}

// truncate cuts s to at most n bytes of valid UTF-8 without NUL bytes (which PostgreSQL
// refuses in text).
func truncate(s string, n int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Poison is one recorded poisoned event.
type Poison struct {
	Consumer  string
	Position  int64
	Error     string
	CreatedAt time.Time
}

// Poisoned returns the poisoned events recorded for consumer, oldest first.
func Poisoned(ctx context.Context, db *database.DB, consumer string) ([]Poison, error) {
	rows, err := db.QueryContext(ctx, db.Rebind(`SELECT consumer, position, error, created_at FROM consumer_poison WHERE consumer = ? ORDER BY id`), consumer)
	if err != nil {
		return nil, fmt.Errorf("read poisoned events: %w", err)
	}
	defer rows.Close()
	var out []Poison
	for rows.Next() {
		var p Poison
		var created any
		if err := rows.Scan(&p.Consumer, &p.Position, &p.Error, &created); err != nil {
			return nil, fmt.Errorf("read poisoned events: %w", err)
		}
		if p.CreatedAt, err = database.TimeValue(created); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
