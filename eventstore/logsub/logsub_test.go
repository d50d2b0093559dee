package logsub_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore/logsub"
	"github.com/mailledger/mailledger/eventstore/storetest"
)

func TestConsumerConformance(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		storetest.RunConsumer(t, func(t testing.TB) *database.DB { return dbtest.Open(t, d) })
	})
}

func TestConfigValidate(t *testing.T) {
	assert.NoError(t, logsub.Config{}.Validate(), "zero config takes the defaults")
	err := logsub.Config{PollInterval: -1, BatchSize: -1, NackDelay: -1, CloseTimeout: -1}.Validate()
	require.Error(t, err)
	for _, want := range []string{"poll interval", "batch size", "nack delay", "close timeout"} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = logsub.NewSubscriber(nil, logsub.Config{})
	assert.Error(t, err, "nil store")
}

func TestRecordRejectsForeignMessages(t *testing.T) {
	msg := message.NewMessage("x", []byte(`{}`))
	_, err := logsub.Record(msg)
	assert.ErrorIs(t, err, logsub.ErrBadMessage)
	_, err = logsub.Position(msg)
	assert.ErrorIs(t, err, logsub.ErrBadMessage)
	msg.Metadata.Set(logsub.MetaPosition, "0")
	_, err = logsub.Position(msg)
	assert.ErrorIs(t, err, logsub.ErrBadMessage, "position 0")
}

func TestPoisonPublisherRejectsForeignMessages(t *testing.T) {
	db := dbtest.Open(t, database.SQLite)
	pub, err := logsub.NewPoisonPublisher(db)
	require.NoError(t, err)
	err = pub.Publish("poison", message.NewMessage("x", nil))
	assert.ErrorIs(t, err, logsub.ErrBadMessage, "a message without a position cannot be recorded")
}

// TestPoisonErrorIsBounded stores a long error with invalid UTF-8 and NUL bytes as valid
// text of bounded size on every database.
func TestPoisonErrorIsBounded(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		db := dbtest.Open(t, d)
		pub, err := logsub.NewPoisonPublisher(db)
		require.NoError(t, err)
		msg := message.NewMessage("1", nil)
		msg.Metadata.Set(logsub.MetaPosition, "1")
		msg.Metadata.Set(logsub.MetaConsumer, "c")
		msg.Metadata.Set("reason_poisoned", "\xff\x00"+strings.Repeat("é", 10000))
		require.NoError(t, pub.Publish("poison", msg))
		rows, err := logsub.Poisoned(t.Context(), db, "c")
		require.NoError(t, err)
		require.Len(t, rows, 1)
		assert.LessOrEqual(t, len(rows[0].Error), 8000)
		assert.Greater(t, len(rows[0].Error), 7000)
		assert.True(t, strings.HasPrefix(rows[0].Error, "\uFFFDéé"), "got %q…", rows[0].Error[:10])
		assert.WithinDuration(t, time.Now(), rows[0].CreatedAt, time.Minute)
	})
}
