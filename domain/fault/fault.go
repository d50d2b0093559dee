// Package fault is mailledger's one vocabulary of error kinds: what went wrong, in the
// terms a caller acts on (fix the input, log in, retry later, report a defect). Every
// package's sentinel errors carry one of these kinds, so that handlers/errors.go maps a
// kind to its HTTP status instead of knowing each package's sentinels, and a new error
// needs no change there unless the contract gives it a code of its own.
//
// The package lives under domain/ because the domain may import only the standard
// library and itself; everything else may import it too.
//
// Rules:
//  1. A sentinel is made with New: it keeps its own text and is of its kind
//     (errors.Is(err, fault.NotFound)), and so is every error that wraps it.
//  2. Wrapping keeps the cause: fmt.Errorf("%w: %w", sentinel, cause), never "%w: %v",
//     so that errors.Is finds both the kind and the cause.
//  3. An error's kind is the first kind met walking its chain (KindOf): the outer
//     sentinel decides when a cause has a kind of its own.
package fault

import "errors"

// Kind is a class of error. The zero Kind, Other, is an error the caller cannot act on:
// a defect or an outage the server does not recognise. Add a kind at the end of the list
// and in Kinds; handlers/errors.go then needs its status (its test fails until it has one).
type Kind uint8

// The kinds.
const (
	// Other is an error of no known kind: a fault of the server.
	Other Kind = iota
	// Invalid means the caller's input broke a rule (a field, a query, a body).
	Invalid
	// Unauthenticated means the caller's credentials are missing or wrong.
	Unauthenticated
	// Forbidden means the caller may not do this.
	Forbidden
	// NotFound means the object does not exist, or is not the caller's to see.
	NotFound
	// Conflict means the object's state, or a concurrent change, does not allow the action.
	Conflict
	// Gone means the object existed but its content is no longer there.
	Gone
	// TooLarge means the input is over a size limit.
	TooLarge
	// Timeout means the caller did not send its input within the time allowed.
	Timeout
	// RateLimited means the caller tried too often and must wait.
	RateLimited
	// Unavailable means a part the action needs is absent, down or busy; retrying may work.
	Unavailable
	// Integrity means stored data failed its integrity check; it is not served.
	Integrity
)

// kindNames are the texts of the kinds, in their order.
var kindNames = [...]string{
	Other:           "other error",
	Invalid:         "invalid",
	Unauthenticated: "unauthenticated",
	Forbidden:       "forbidden",
	NotFound:        "not found",
	Conflict:        "conflict",
	Gone:            "gone",
	TooLarge:        "too large",
	Timeout:         "timeout",
	RateLimited:     "rate limited",
	Unavailable:     "unavailable",
	Integrity:       "integrity error",
}

// Kinds returns every kind, Other first, so that a test can check each is mapped.
func Kinds() []Kind {
	kinds := make([]Kind, len(kindNames))
	for i := range kinds {
		kinds[i] = Kind(i)
	}
	return kinds
}

// Error returns the kind's name. A Kind is an error so that fmt.Errorf("%w: %w", kind,
// cause) and errors.Is(err, kind) work without a wrapper type.
func (k Kind) Error() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown kind"
}

// String returns the kind's name.
func (k Kind) String() string { return k.Error() }

// sentinel is an error with a text of its own that is of a kind.
type sentinel struct {
	kind Kind
	text string
}

func (e *sentinel) Error() string { return e.text }

// Unwrap makes errors.Is(err, e.kind) true.
func (e *sentinel) Unwrap() error { return e.kind }

// New returns a sentinel error whose text is text and whose kind is k. Each call returns
// a distinct error, compared by identity like errors.New's.
func New(k Kind, text string) error { return &sentinel{kind: k, text: text} }

// KindOf returns the first kind in err's chain (depth first, as errors.As walks it), or
// Other when it has none, or when err is nil.
func KindOf(err error) Kind {
	var k Kind
	if errors.As(err, &k) {
		return k
	}
	return Other
}

// FieldsError is an Invalid error that names the input fields that are wrong; the HTTP
// error body lists them.
type FieldsError interface {
	error
	// InvalidFields returns field → reason.
	InvalidFields() map[string]string
}
