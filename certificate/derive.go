package certificate

import (
	"errors"
	"fmt"

	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
)

// ErrNotCompleted means a request's events do not end with its completion, so it has no
// certificate yet.
var ErrNotCompleted = errors.New("erasure request not completed")

// BodyFromEvents rebuilds the certificate body from every event of one request's stream,
// in stream-version order, as stored (the payloads are decoded as stored, not upcast).
// The last record must be the request's erasure.execution_completed event with its
// ChainHash set. It checks that the records form the request's own stream (its id,
// type and tenant) and returns ErrNotCompleted when the request did not complete.
//
// It is the one derivation of a body: the bundle, its verifier and the gdpr_requests
// projection's certificate_hash all call it, so that they agree byte for byte. It reads
// the payloads as hashed because the verifier, offline, has nothing else.
func BodyFromEvents(recs []eventstore.Record) (Body, error) {
	if len(recs) == 0 {
		return Body{}, errors.New("no events")
	}
	var req erasure.Request
	for i := range recs {
		if err := applyRecord(&req, &recs[i]); err != nil {
			return Body{}, err
		}
	}
	last := &recs[len(recs)-1]
	if req.Status != erasure.StatusCompleted || last.EventType != erasure.EventExecutionCompleted {
		return Body{}, fmt.Errorf("%w: request %s is %s", ErrNotCompleted, req.RequestID, req.Status)
	}
	return newBody(&req, last), nil
}

// applyRecord decodes one stored record of the request and applies it to req.
func applyRecord(req *erasure.Request, rec *eventstore.Record) error {
	ev, err := erasure.Decode(rec.EventType, rec.Payload)
	if err != nil {
		return fmt.Errorf("event at position %d: %w", rec.Position, err)
	}
	if ev.SchemaVersion() != rec.SchemaVersion {
		return fmt.Errorf("event at position %d: %s schema version %d is unknown (want %d)",
			rec.Position, rec.EventType, rec.SchemaVersion, ev.SchemaVersion())
	}
	if rec.StreamVersion == 1 && rec.EventType != erasure.EventCreated {
		return fmt.Errorf("event at position %d: the stream starts with %s, not %s", rec.Position, rec.EventType, erasure.EventCreated)
	}
	req.Apply(ev, rec.RecordedAt)
	if rec.StreamID != erasure.StreamID(req.RequestID) || rec.StreamType != erasure.StreamType || rec.TenantID != req.TenantID {
		return fmt.Errorf("event at position %d: stream %s (%s, tenant %s) is not the stream of request %s of tenant %s",
			rec.Position, rec.StreamID, rec.StreamType, rec.TenantID, req.RequestID, req.TenantID)
	}
	return nil
}
