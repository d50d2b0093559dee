package legalhold

import (
	"fmt"

	"github.com/mailledger/mailledger/domain"
)

// StreamType is the ledger stream type of holds; a hold's stream id is "legalhold-<id>".
const StreamType = "legal_hold"

// StreamID is the ledger stream of hold id.
func StreamID(id string) string { return "legalhold-" + id }

// Placed records a new active hold.
type Placed struct {
	ID        string `json:"id"`
	TenantID  string `json:"tenant_id"`
	Type      string `json:"type"`
	Value     string `json:"value"`
	Reason    string `json:"reason"`
	Matter    string `json:"matter"`
	CreatedBy string `json:"created_by"`
}

// Released records that a hold no longer applies.
type Released struct {
	ID         string `json:"id"`
	ReleasedBy string `json:"released_by"`
}

// Stored event names; never change them.
const (
	EventPlaced   = "legalhold.placed"
	EventReleased = "legalhold.released"
)

// EventType implements domain.Event.
func (*Placed) EventType() string { return EventPlaced }

// SchemaVersion implements domain.Event.
func (*Placed) SchemaVersion() int { return 1 }

// EventType implements domain.Event.
func (*Released) EventType() string { return EventReleased }

// SchemaVersion implements domain.Event.
func (*Released) SchemaVersion() int { return 1 }

var registry = domain.Registry{
	EventPlaced:   func() domain.Event { return &Placed{} },
	EventReleased: func() domain.Event { return &Released{} },
}

// Decode turns a stored event of this aggregate back into its struct.
func Decode(eventType string, data []byte) (domain.Event, error) {
	e, err := registry.Decode(eventType, data)
	if err != nil {
		return nil, fmt.Errorf("legalhold: %w", err)
	}
	return e, nil
}
