// Package domain holds mailledger's aggregates (erasure requests, export jobs, legal
// holds), their commands, events and state machines. It is pure Go: no I/O, no clock,
// no SQL, and it imports nothing of ours (make lint checks it).
package domain

import (
	"encoding/json"
	"fmt"
)

// Event is a fact an aggregate recorded. Its type name and schema version are explicit
// and stable, never derived from the Go type, so that the ledger replays old events after
// code is renamed.
type Event interface {
	// EventType is the stored name, such as "erasure.request_approved".
	EventType() string
	// SchemaVersion is the version of the payload's shape, starting at 1.
	SchemaVersion() int
}

// Metadata says who caused an event and from where. It is stored beside the payload and
// covered by the event's hash.
type Metadata struct {
	Actor         string `json:"actor"`
	ClientIP      string `json:"client_ip"`
	UserAgent     string `json:"user_agent"`
	CorrelationID string `json:"correlation_id"`
}

// Registry maps the stored names of one aggregate's events to constructors of their
// structs. Its Decode is the one way a stored event becomes a domain event: the use cases'
// repository, the projections and the certificate all reach it through their aggregate's
// Decode.
type Registry map[string]func() Event

// Decode turns a stored event back into its struct: the constructor registered under
// eventType, filled from the JSON data. An unregistered type is an error.
func (r Registry) Decode(eventType string, data []byte) (Event, error) {
	mk, ok := r[eventType]
	if !ok {
		return nil, fmt.Errorf("unknown event type %q", eventType)
	}
	e := mk()
	if err := json.Unmarshal(data, e); err != nil {
		return nil, fmt.Errorf("decode %s: %w", eventType, err)
	}
	return e, nil
}
