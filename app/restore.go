package app

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/domain/fault"
	"github.com/mailledger/mailledger/eventstore"
)

// Smarthost delivers a message to one mailbox through an SMTP relay (package smarthost).
type Smarthost interface {
	// Send delivers msg, the original bytes, to the mailbox to; nil once the relay has
	// taken it.
	Send(ctx context.Context, to string, msg io.Reader) error
	// String names the relay (its address) for the ledger.
	String() string
}

// EventMessageRestored records a restore to a mailbox: who, which message, to whom,
// through which relay, and whether the relay took it.
const EventMessageRestored = "archive.message_restored"

// Errors of Restore.
var (
	// ErrNoSmarthost means no SMARTHOST_ADDR is configured.
	ErrNoSmarthost = fault.New(fault.Unavailable, "restore needs a smarthost (SMARTHOST_ADDR)")
	// ErrRestoreTarget means a plain user asked for a mailbox other than their own.
	ErrRestoreTarget = fault.New(fault.Forbidden, "a user restores only to their own address")
	// ErrBadRecipient means the target is not an address by the address rule.
	ErrBadRecipient = fault.New(fault.Invalid, "not an email address")
	// ErrSmarthostRefused means the relay did not take the message; the event says why.
	ErrSmarthostRefused = fault.New(fault.Unavailable, "restore failed")
)

type restored struct {
	MessageID int64  `json:"message_id"`
	To        string `json:"to"`
	Smarthost string `json:"smarthost"`
	Delivered bool   `json:"delivered"`
	Error     string `json:"error,omitempty"`
}

// Restore sends message id's original bytes, checked against its digest, to the mailbox
// to through the smarthost, and records the attempt in the ledger whatever its outcome.
// A plain user restores only mail they may see, and only to their own address (to may
// then be empty); auditors and administrators restore any message of their tenant to any
// address. It returns the address the message went to.
func (m *Messages) Restore(ctx context.Context, r Reader, id int64, to string) (string, error) {
	to, err := restoreTarget(r, to)
	if err != nil {
		return "", err
	}
	if _, err := m.arc.GetFor(ctx, r.Tenant, id, r.Participant); err != nil {
		return "", err // another tenant's or user's message is not found, smarthost or not
	}
	if m.cfg.Smarthost == nil {
		return "", ErrNoSmarthost
	}
	raw, err := m.openRaw(ctx, r, id)
	if err != nil {
		return "", err
	}
	sendErr := m.cfg.Smarthost.Send(ctx, to, raw)
	if closeErr := raw.Close(); sendErr == nil {
		sendErr = closeErr // the digest check at the end of the read
	}
	ev := restored{MessageID: id, To: to, Smarthost: m.cfg.Smarthost.String(), Delivered: sendErr == nil}
	if sendErr != nil {
		ev.Error = sendErr.Error()
	}
	stream := eventstore.Stream{ID: "message-" + strconv.FormatInt(id, 10), Type: "message", TenantID: r.Tenant}
	if err := m.record(ctx, stream, EventMessageRestored, ev, r.Meta); err != nil {
		return "", err
	}
	if sendErr != nil {
		if fault.KindOf(sendErr) == fault.Integrity {
			return "", sendErr
		}
		return "", fmt.Errorf("%w: %w", ErrSmarthostRefused, sendErr)
	}
	return to, nil
}

// restoreTarget is the mailbox a restore goes to, by the address rule's key: a plain
// user's own address (to empty or the same address), anyone's for the others.
func restoreTarget(r Reader, to string) (string, error) {
	if to == "" && r.Participant != "" {
		return r.Participant, nil
	}
	key, err := analyzer.Normalize(to)
	if err != nil {
		return "", fmt.Errorf("%w: %q", ErrBadRecipient, to)
	}
	if r.Participant != "" {
		own, _ := analyzer.Normalize(r.Participant)
		if key != own {
			return "", ErrRestoreTarget
		}
	}
	return key, nil
}

// openRaw opens message id's original for r, holding its share of the memory budget
// until Close, without recording a view (the restore records itself).
func (m *Messages) openRaw(ctx context.Context, r Reader, id int64) (*RawMessage, error) {
	msg, err := m.arc.GetFor(ctx, r.Tenant, id, r.Participant)
	if err != nil {
		return nil, err
	}
	weight, err := m.acquire(ctx, min(msg.Size, archive.StreamMemory))
	if err != nil {
		return nil, err
	}
	rr, err := m.arc.OpenRawFor(ctx, r.Tenant, id, r.Participant)
	if err != nil {
		m.cfg.Budget.Release(weight)
		return nil, err
	}
	return &RawMessage{RawReader: rr, release: func() { m.cfg.Budget.Release(weight) }}, nil
}
