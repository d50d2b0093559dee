package app

import (
	"context"
	"strconv"

	"github.com/mailledger/mailledger/archive"
)

// Body returns a message's text and its HTML part as written (archive.Body: the caller
// sanitises the HTML before showing it) and records the view ("body"). Like Text, the
// parse holds the message's size of the memory budget; none within BudgetWait is
// ErrBusy. Each part is cut to MaxTextBytes.
func (m *Messages) Body(ctx context.Context, r Reader, id int64) (*archive.Body, error) {
	msg, err := m.arc.GetFor(ctx, r.Tenant, id, r.Participant)
	if err != nil {
		return nil, err
	}
	weight, err := m.acquire(ctx, msg.Size)
	if err != nil {
		return nil, err
	}
	body, err := m.arc.Body(ctx, r.Tenant, id, r.Participant)
	if err == nil {
		body = &archive.Body{Text: truncateText(body.Text, m.cfg.MaxTextBytes).Text,
			HTML: truncateText(body.HTML, m.cfg.MaxTextBytes).Text, Attachments: body.Attachments}
	}
	m.cfg.Budget.Release(weight)
	if err != nil {
		return nil, err
	}
	return body, m.recordView(ctx, r, id, "body")
}

// Attachment reads attachment seq of a message the reader may see (numbered as Body lists
// them), and records the view ("attachment"). The parse holds the message's size of the
// memory budget, as Body.
func (m *Messages) Attachment(ctx context.Context, r Reader, id int64, seq int) (*archive.Attachment, error) {
	msg, err := m.arc.GetFor(ctx, r.Tenant, id, r.Participant)
	if err != nil {
		return nil, err
	}
	weight, err := m.acquire(ctx, msg.Size)
	if err != nil {
		return nil, err
	}
	att, err := m.arc.Attachment(ctx, r.Tenant, id, r.Participant, seq)
	m.cfg.Budget.Release(weight)
	if err != nil {
		return nil, err
	}
	return att, m.recordView(ctx, r, id, "attachment "+strconv.Itoa(seq))
}
