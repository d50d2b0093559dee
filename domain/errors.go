package domain

import "github.com/mailledger/mailledger/domain/fault"

// Errors shared by every aggregate, of the kinds of domain/fault that handlers map to the
// statuses of docs/api.md.
var (
	// ErrInvalidTransition means the aggregate's state does not allow the command.
	ErrInvalidTransition = fault.New(fault.Conflict, "invalid transition")
	// ErrValidation means a command's input broke a rule; see ValidationError for fields.
	ErrValidation = fault.New(fault.Invalid, "validation failed")
)

// ValidationError lists every problem of a command's input, field by field.
type ValidationError struct {
	Fields map[string]string
}

func (e *ValidationError) Error() string { return "validation failed" }

// Unwrap makes errors.Is(err, ErrValidation) true, and so errors.Is(err, fault.Invalid).
func (e *ValidationError) Unwrap() error { return ErrValidation }

// InvalidFields returns field → reason, for the error body (fault.FieldsError).
func (e *ValidationError) InvalidFields() map[string]string { return e.Fields }

// Add records a problem with field (the first one per field wins).
func (e *ValidationError) Add(field, reason string) {
	if e.Fields == nil {
		e.Fields = map[string]string{}
	}
	if _, ok := e.Fields[field]; !ok {
		e.Fields[field] = reason
	}
}

// Err returns e when it holds problems, else nil.
func (e *ValidationError) Err() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}

// TransitionError says which state refused which action.
type TransitionError struct {
	Subject string // "hold LH-…", "request GDPR-2026-00003"
	State   string
	Action  string
	Need    string // the state(s) the action needs
}

func (e *TransitionError) Error() string {
	return e.Subject + " is " + e.State + "; " + e.Action + " needs " + e.Need
}

// Unwrap makes errors.Is(err, ErrInvalidTransition) true.
func (e *TransitionError) Unwrap() error { return ErrInvalidTransition }
