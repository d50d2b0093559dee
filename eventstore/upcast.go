package eventstore

import (
	"encoding/json"
	"fmt"
	"sync"
)

// UpcastFunc turns a payload of one schema version into the next version's shape.
type UpcastFunc func(payload json.RawMessage) (json.RawMessage, error)

type upcastKey struct {
	eventType string
	from      int
}

// Upcasters is the registry of payload upgrades applied when events are read. Stored
// bytes are never rewritten: the ledger is immutable, and hashes cover what was stored.
type Upcasters struct {
	mu    sync.RWMutex
	funcs map[upcastKey]UpcastFunc
}

// NewUpcasters returns an empty registry.
func NewUpcasters() *Upcasters { return &Upcasters{funcs: map[upcastKey]UpcastFunc{}} }

// Register adds the upgrade of eventType from version from to from+1. Registering the
// same step twice panics: it is a programming error.
func (u *Upcasters) Register(eventType string, from int, fn UpcastFunc) {
	u.mu.Lock()
	defer u.mu.Unlock()
	k := upcastKey{eventType, from}
	if _, dup := u.funcs[k]; dup {
		panic(fmt.Sprintf("eventstore: upcaster for %s v%d registered twice", eventType, from))
	}
	u.funcs[k] = fn
}

// apply upgrades r.Data step by step to the newest registered version.
func (u *Upcasters) apply(r *Record) error {
	r.Data, r.DataVersion = r.Payload, r.SchemaVersion
	u.mu.RLock()
	defer u.mu.RUnlock()
	for {
		fn, ok := u.funcs[upcastKey{r.EventType, r.DataVersion}]
		if !ok {
			return nil
		}
		next, err := fn(r.Data)
		if err != nil {
			return fmt.Errorf("upcast %s v%d at position %d: %w", r.EventType, r.DataVersion, r.Position, err)
		}
		r.Data, r.DataVersion = next, r.DataVersion+1
	}
}
