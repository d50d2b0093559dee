package logsub

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/mailledger/mailledger/eventstore"
)

// Metadata keys of a ledger event message. The payload is the upcast event payload.
const (
	MetaConsumer      = "consumer"       // the subscribing consumer
	MetaPosition      = "position"       // decimal position in the log
	MetaStreamID      = "stream_id"      // the event's stream
	MetaStreamType    = "stream_type"    // the stream's type
	MetaStreamVersion = "stream_version" // decimal version within the stream
	MetaTenantID      = "tenant_id"      // the stream's tenant
	MetaEventType     = "event_type"     // such as "erasure.request_approved"
	// MetaSchemaVersion is the version of the payload as delivered, after upcasting.
	MetaSchemaVersion = "schema_version"
	// MetaStoredSchemaVersion is the version the event was stored with.
	MetaStoredSchemaVersion = "stored_schema_version"
	// MetaStoredPayload holds the stored payload bytes, only when upcasting changed them.
	MetaStoredPayload = "stored_payload"
	MetaEventMetadata = "event_metadata" // the event's canonical metadata JSON
	MetaRecordedAt    = "recorded_at"    // commit time, eventstore.TimeFormat
	MetaLeafHash      = "leaf_hash"      // hex
	MetaChainHash     = "chain_hash"     // hex
)

// newMessage turns a record into the message delivered to consumer.
func newMessage(consumer string, rec *eventstore.Record) *message.Message {
	msg := message.NewMessage(strconv.FormatInt(rec.Position, 10), message.Payload(rec.Data))
	md := msg.Metadata
	md.Set(MetaConsumer, consumer)
	md.Set(MetaPosition, strconv.FormatInt(rec.Position, 10))
	md.Set(MetaStreamID, rec.StreamID)
	md.Set(MetaStreamType, rec.StreamType)
	md.Set(MetaStreamVersion, strconv.FormatInt(rec.StreamVersion, 10))
	md.Set(MetaTenantID, rec.TenantID)
	md.Set(MetaEventType, rec.EventType)
	md.Set(MetaSchemaVersion, strconv.Itoa(rec.DataVersion))
	md.Set(MetaStoredSchemaVersion, strconv.Itoa(rec.SchemaVersion))
	if rec.DataVersion != rec.SchemaVersion {
		md.Set(MetaStoredPayload, string(rec.Payload))
	}
	md.Set(MetaEventMetadata, string(rec.Metadata))
	md.Set(MetaRecordedAt, rec.RecordedAt.UTC().Format(eventstore.TimeFormat))
	md.Set(MetaLeafHash, rec.LeafHash.String())
	md.Set(MetaChainHash, rec.ChainHash.String())
	return msg
}

// Position returns the log position a message carries.
func Position(msg *message.Message) (int64, error) {
	p, err := parsePosition(msg.Metadata.Get(MetaPosition))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	return p, nil
}

// RecordedAt returns the commit time a message carries.
func RecordedAt(msg *message.Message) (time.Time, error) {
	at, err := time.Parse(eventstore.TimeFormat, msg.Metadata.Get(MetaRecordedAt))
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: recorded_at: %w", ErrBadMessage, err)
	}
	return at, nil
}

func parsePosition(s string) (int64, error) {
	p, err := strconv.ParseInt(s, 10, 64)
	if err == nil && p < 1 {
		err = fmt.Errorf("position %d is not positive", p)
	}
	return p, err
}

// Record rebuilds the ledger record a message carries: Data and DataVersion as delivered,
// Payload and SchemaVersion as stored.
func Record(msg *message.Message) (eventstore.Record, error) {
	md := msg.Metadata
	rec := eventstore.Record{
		StreamID: md.Get(MetaStreamID), StreamType: md.Get(MetaStreamType), TenantID: md.Get(MetaTenantID),
		EventType: md.Get(MetaEventType), Metadata: []byte(md.Get(MetaEventMetadata)),
		Data: []byte(msg.Payload), Payload: []byte(msg.Payload),
	}
	if stored, ok := md[MetaStoredPayload]; ok {
		rec.Payload = []byte(stored)
	}
	var errs [7]error
	rec.Position, errs[0] = parsePosition(md.Get(MetaPosition))
	rec.StreamVersion, errs[1] = strconv.ParseInt(md.Get(MetaStreamVersion), 10, 64)
	rec.DataVersion, errs[2] = strconv.Atoi(md.Get(MetaSchemaVersion))
	rec.SchemaVersion, errs[3] = strconv.Atoi(md.Get(MetaStoredSchemaVersion))
	rec.RecordedAt, errs[4] = time.Parse(eventstore.TimeFormat, md.Get(MetaRecordedAt))
	rec.LeafHash, errs[5] = eventstore.ParseHash(md.Get(MetaLeafHash))
	rec.ChainHash, errs[6] = eventstore.ParseHash(md.Get(MetaChainHash))
	if err := errors.Join(errs[:]...); err != nil {
		return eventstore.Record{}, fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	return rec, nil
}
