// Package domain holds mailledger's aggregates (erasure requests, export jobs, legal
// holds), their commands, events and state machines. It is pure Go: no I/O, no clock,
// no SQL, and it imports nothing of ours (make lint checks it).
package domain

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
