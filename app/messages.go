package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
)

// Access events: every read of the archive is recorded in the ledger (who, when, from
// where, what), never what the message says.
const (
	EventMessageViewed    = "archive.message_viewed"
	EventMessagesSearched = "archive.messages_searched"
)

// Reader is who reads the archive: the tenant, and for plain users the address whose
// mail they may see.
type Reader struct {
	Tenant      string
	Participant string // empty for auditors and administrators
	Meta        domain.Metadata
}

// Messages reads the archive on behalf of a Reader and records each access.
type Messages struct {
	arc   *archive.Archive
	store *eventstore.Store
}

// NewMessages returns the archive-reading use cases; it rejects nil dependencies.
func NewMessages(arc *archive.Archive, store *eventstore.Store) (*Messages, error) {
	if arc == nil || store == nil {
		return nil, errors.New("app: messages need an archive and a store")
	}
	return &Messages{arc: arc, store: store}, nil
}

type viewed struct {
	MessageID int64  `json:"message_id"`
	View      string `json:"view"`
}

type searched struct {
	Query    searchFilters `json:"query"`
	Total    int           `json:"total"`
	Returned []int64       `json:"returned"`
}

type searchFilters struct {
	Q        string `json:"q"`
	From     string `json:"from"`
	To       string `json:"to"`
	DateFrom string `json:"date_from"`
	DateTo   string `json:"date_to"`
	Limit    int    `json:"limit"`
	Offset   int    `json:"offset"`
}

// Search lists matching messages and records the search.
func (m *Messages) Search(ctx context.Context, r Reader, q archive.Query) ([]archive.Message, int, error) {
	q.Tenant, q.Participant = r.Tenant, r.Participant
	msgs, total, err := m.arc.Search(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]int64, len(msgs))
	for i, msg := range msgs {
		ids[i] = msg.ID
	}
	ev := searched{Total: total, Returned: ids, Query: searchFilters{Q: q.Text, From: q.From, To: q.To,
		DateFrom: fmtDate(q.DateFrom), DateTo: fmtDate(q.DateTo), Limit: q.Limit, Offset: q.Offset}}
	stream := eventstore.Stream{ID: "search-" + r.Tenant, Type: "archive_search", TenantID: r.Tenant}
	return msgs, total, m.record(ctx, stream, EventMessagesSearched, ev, r.Meta)
}

// Get returns one message's metadata and records the view.
func (m *Messages) Get(ctx context.Context, r Reader, id int64) (*archive.Message, error) {
	msg, err := m.arc.GetFor(ctx, r.Tenant, id, r.Participant)
	if err != nil {
		return nil, err
	}
	return msg, m.recordView(ctx, r, id, "metadata")
}

// Raw returns the original bytes and records the view.
func (m *Messages) Raw(ctx context.Context, r Reader, id int64) ([]byte, error) {
	raw, err := m.arc.RawFor(ctx, r.Tenant, id, r.Participant)
	if err != nil {
		return nil, err
	}
	return raw, m.recordView(ctx, r, id, "raw")
}

// Text returns the text body and records the view.
func (m *Messages) Text(ctx context.Context, r Reader, id int64) (string, error) {
	text, err := m.arc.Text(ctx, r.Tenant, id, r.Participant)
	if err != nil {
		return "", err
	}
	return text, m.recordView(ctx, r, id, "text")
}

func (m *Messages) recordView(ctx context.Context, r Reader, id int64, view string) error {
	stream := eventstore.Stream{ID: "message-" + strconv.FormatInt(id, 10), Type: "message", TenantID: r.Tenant}
	return m.record(ctx, stream, EventMessageViewed, viewed{MessageID: id, View: view}, r.Meta)
}

func (m *Messages) record(ctx context.Context, s eventstore.Stream, typ string, payload any, md domain.Metadata) error {
	_, err := m.store.Append(ctx, s, eventstore.AnyVersion, eventstore.NewEvent{Type: typ, SchemaVersion: 1, Payload: payload, Metadata: md})
	if err != nil {
		return fmt.Errorf("record access: %w", err)
	}
	return nil
}

func fmtDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
