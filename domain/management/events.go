// Package management holds the events of the management API (domains, customers, users,
// groups, header checks). Its rules:
//
//  1. Every applied element of a management write is one event, named below, never
//     derived from a Go type.
//  2. An event says what changed: the object, its key, the values before and after.
//  3. A password or password hash never enters an event; PasswordChanged says that one
//     was set (NewChange drops the password fields from Before and After).
package management

import "github.com/mailledger/mailledger/domain"

// StreamType is the stream type of every management event; a stream is one object
// (StreamID).
const StreamType = "management"

// The stored names of the management events, version 1.
const (
	DomainAdded        = "management.domain_added"
	DomainDeleted      = "management.domain_deleted"
	CustomerAdded      = "management.customer_added"
	CustomerUpdated    = "management.customer_updated"
	CustomerDeleted    = "management.customer_deleted"
	UserAdded          = "management.user_added"
	UserUpdated        = "management.user_updated"
	UserDeleted        = "management.user_deleted"
	GroupAdded         = "management.group_added"
	GroupUpdated       = "management.group_updated"
	GroupDeleted       = "management.group_deleted"
	HeaderCheckAdded   = "management.header_check_added"
	HeaderCheckDeleted = "management.header_check_deleted"
)

// names lists every event name, for the registry.
var names = []string{DomainAdded, DomainDeleted, CustomerAdded, CustomerUpdated, CustomerDeleted,
	UserAdded, UserUpdated, UserDeleted, GroupAdded, GroupUpdated, GroupDeleted,
	HeaderCheckAdded, HeaderCheckDeleted}

// Change is one applied management write (rule 2). Before is null for an addition,
// After for a deletion.
type Change struct {
	name            string
	Object          string         `json:"object"`
	Key             string         `json:"key"`
	Before          map[string]any `json:"before"`
	After           map[string]any `json:"after"`
	PasswordChanged bool           `json:"password_changed"`
}

// passwordFields are the fields NewChange removes (rule 3).
var passwordFields = []string{"password", "admin_password", "password_hash"}

// NewChange returns the event name for object key, without any password field in before
// and after.
func NewChange(name, object, key string, before, after map[string]any, passwordChanged bool) *Change {
	for _, m := range []map[string]any{before, after} {
		for _, f := range passwordFields {
			delete(m, f)
		}
	}
	return &Change{name: name, Object: object, Key: key, Before: before, After: after, PasswordChanged: passwordChanged}
}

// EventType implements domain.Event.
func (c *Change) EventType() string { return c.name }

// SchemaVersion implements domain.Event.
func (c *Change) SchemaVersion() int { return 1 }

// StreamID is the stream of one object, such as "management-customer-acme".
func StreamID(object, key string) string { return "management-" + object + "-" + key }

// registry decodes every management event.
var registry = func() domain.Registry {
	r := domain.Registry{}
	for _, n := range names {
		r[n] = func() domain.Event { return &Change{name: n} }
	}
	return r
}()

// Decode turns a stored management event back into its Change.
func Decode(eventType string, data []byte) (domain.Event, error) {
	return registry.Decode(eventType, data)
}
