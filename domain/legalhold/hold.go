// Package legalhold is the legal hold aggregate: a hold on an address or a whole domain
// that keeps matching mail from erasure and purge until it is released.
//
// Rules:
//  1. A hold's type is "address" or "domain"; its value is a valid address or domain name,
//     stored lower-cased.
//  2. A reason is required: not blank, at most 2000 characters. The matter is optional, at
//     most 255 characters.
//  3. A placed hold is active. Release is allowed only from active, and a released hold
//     stays released.
//  4. Only active holds block erasure and purge.
package legalhold

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailledger/mailledger/domain"
)

// Hold types.
const (
	TypeAddress = "address"
	TypeDomain  = "domain"
)

// Hold statuses.
const (
	StatusActive   = "active"
	StatusReleased = "released"
)

// Hold is the aggregate's state, rebuilt from its events.
type Hold struct {
	ID         string
	TenantID   string
	Type       string
	Value      string
	Reason     string
	Matter     string
	Status     string
	CreatedBy  string
	CreatedAt  time.Time
	ReleasedBy string
	ReleasedAt time.Time
	Version    int64 // events applied; the expected version of the next append
}

// Place is the command that creates a hold.
type Place struct {
	ID, TenantID, Type, Value, Reason, Matter, Actor string
}

// PlaceHold validates cmd (rules 1 and 2) and returns the event that creates the hold.
func PlaceHold(cmd Place) (*Placed, error) {
	var v domain.ValidationError
	typ := strings.TrimSpace(cmd.Type)
	value := strings.ToLower(strings.TrimSpace(cmd.Value))
	switch typ {
	case TypeAddress:
		if !validAddress(value) {
			v.Add("value", "must be an email address (addr-spec)")
		}
	case TypeDomain:
		value = strings.TrimPrefix(value, "@")
		if !validDomain(value) {
			v.Add("value", "must be a domain name")
		}
	default:
		v.Add("type", `must be "address" or "domain"`)
	}
	reason := strings.TrimSpace(cmd.Reason)
	if reason == "" {
		v.Add("reason", "is required")
	} else if utf8.RuneCountInString(reason) > 2000 {
		v.Add("reason", "must be at most 2000 characters")
	}
	matter := strings.TrimSpace(cmd.Matter)
	if utf8.RuneCountInString(matter) > 255 {
		v.Add("matter", "must be at most 255 characters")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return &Placed{ID: cmd.ID, TenantID: cmd.TenantID, Type: typ, Value: value, Reason: reason, Matter: matter, CreatedBy: cmd.Actor}, nil
}

// Release returns the event that releases an active hold (rule 3).
func (h *Hold) Release(actor string) (*Released, error) {
	if h.Status != StatusActive {
		return nil, &domain.TransitionError{Subject: "hold " + h.ID, State: h.Status, Action: "release", Need: StatusActive}
	}
	return &Released{ID: h.ID, ReleasedBy: actor}, nil
}

// Apply moves the state by one event recorded at at.
func (h *Hold) Apply(e domain.Event, at time.Time) {
	switch ev := e.(type) {
	case *Placed:
		*h = Hold{ID: ev.ID, TenantID: ev.TenantID, Type: ev.Type, Value: ev.Value, Reason: ev.Reason,
			Matter: ev.Matter, Status: StatusActive, CreatedBy: ev.CreatedBy, CreatedAt: at}
	case *Released:
		h.Status, h.ReleasedBy, h.ReleasedAt = StatusReleased, ev.ReleasedBy, at
	}
	h.Version++
}

// validAddress accepts one bare address, a quoted local part included (domain.ValidAddress);
// the application gives the key of the address rule (analyzer.Normalize).
func validAddress(s string) bool { return domain.ValidAddress(s) }

// validDomain accepts the domain part of an address key of the address rule, which the
// application gives (analyzer.NormalizeDomain): a dot-atom of one label or more
// ("example.com", "xn--bcher-kva.example", "localhost") or an address literal
// ("[192.0.2.1]"). Empty labels, white space, control characters and the characters that
// end a domain in an address (@ , ; < > " and a backslash) are refused.
func validDomain(s string) bool {
	if len(s) == 0 || len(s) > 255 {
		return false
	}
	if strings.HasPrefix(s, "[") {
		return strings.HasSuffix(s, "]") && len(s) > 2 && !strings.ContainsAny(s[1:len(s)-1], "[]\\ \t\r\n")
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" {
			return false
		}
	}
	for _, c := range s {
		if c <= ' ' || c == 0x7f || strings.ContainsRune(`@,;<>"\\()[]:`, c) {
			return false
		}
	}
	return true
}
