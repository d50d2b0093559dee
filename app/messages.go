package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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

// Messages reads the archive on behalf of a Reader and records each access. Its reads
// take their memory from a MemoryBudget shared with the exports (see MessagesConfig).
type Messages struct {
	arc   *archive.Archive
	store *eventstore.Store
	cfg   MessagesConfig
}

// NewMessages returns the archive-reading use cases; it rejects nil dependencies and an
// invalid configuration.
func NewMessages(arc *archive.Archive, store *eventstore.Store, cfg MessagesConfig) (*Messages, error) {
	if arc == nil || store == nil {
		return nil, errors.New("app: messages need an archive and a store")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	cfg.setDefaults()
	return &Messages{arc: arc, store: store, cfg: cfg}, nil
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
	Q    string `json:"q"`
	From string `json:"from"`
	To   string `json:"to"`
	Tag  string `json:"tag,omitempty"`
	// Attachments: only messages with attachments were asked for.
	Attachments bool   `json:"attachments,omitempty"`
	DateFrom    string `json:"date_from"`
	DateTo      string `json:"date_to"`
	Limit       int    `json:"limit"`
	Offset      int    `json:"offset"`
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
	ev := searched{Total: total, Returned: ids, Query: searchFilters{Q: q.Text, From: q.From, To: q.To, Tag: q.Tag, Attachments: q.Attachments,
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

// Raw opens the original bytes, checked against the message's digest, and records the
// view. The stream holds at most archive.StreamMemory of the memory budget until it is
// closed, whatever the message's size; a read that cannot get it within
// MessagesConfig.BudgetWait is ErrBusy.
func (m *Messages) Raw(ctx context.Context, r Reader, id int64) (*RawMessage, error) {
	raw, err := m.openRaw(ctx, r, id)
	if err != nil {
		return nil, err
	}
	if err := m.recordView(ctx, r, id, "raw"); err != nil {
		raw.Close()
		return nil, err
	}
	return raw, nil
}

// RawMessage is an open original: read it, then Close it to give its memory back.
type RawMessage struct {
	*archive.RawReader
	release func()
	once    sync.Once
}

// Close closes the stream and gives its memory back; it may be called more than once.
func (r *RawMessage) Close() error {
	var err error
	r.once.Do(func() {
		err = r.RawReader.Close()
		r.release()
	})
	return err
}

// TextView is the text of a message as GET /messages/{id}/text shows it: at most
// MessagesConfig.MaxTextBytes, cut at a character boundary, with Truncated set when more
// text was left out.
type TextView struct {
	Text      string
	Truncated bool
}

// Text returns the text body, truncated to MaxTextBytes, and records the view. The parse
// holds the message's size of the memory budget (all of it for a message larger than
// the budget, which is then read alone); a read that cannot get it within BudgetWait is
// ErrBusy.
func (m *Messages) Text(ctx context.Context, r Reader, id int64) (*TextView, error) {
	msg, err := m.arc.GetFor(ctx, r.Tenant, id, r.Participant)
	if err != nil {
		return nil, err
	}
	weight, err := m.acquire(ctx, msg.Size)
	if err != nil {
		return nil, err
	}
	text, err := m.arc.Text(ctx, r.Tenant, id, r.Participant)
	var view *TextView
	if err == nil {
		view = truncateText(text, m.cfg.MaxTextBytes) // a copy of at most MaxTextBytes
	}
	text = "" // the whole text is no longer held once the budget is given back
	m.cfg.Budget.Release(weight)
	if err != nil {
		return nil, err
	}
	return view, m.recordView(ctx, r, id, "text")
}

// truncateText cuts text to at most limit bytes, at the start of a UTF-8 character.
func truncateText(text string, limit int) *TextView {
	if len(text) <= limit {
		return &TextView{Text: text}
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return &TextView{Text: strings.Clone(text[:cut]), Truncated: true}
}

// acquire takes bytes of the memory budget, waiting at most BudgetWait.
func (m *Messages) acquire(ctx context.Context, bytes int64) (int64, error) {
	wctx, cancel := context.WithTimeout(ctx, m.cfg.BudgetWait)
	defer cancel()
	weight, err := m.cfg.Budget.Acquire(wctx, bytes)
	if err != nil && ctx.Err() == nil {
		return 0, fmt.Errorf("%w: no memory for the message within %v", ErrBusy, m.cfg.BudgetWait)
	}
	return weight, err
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

// Smarthost names the relay restores go through (SMARTHOST_ADDR), "" when none is
// configured.
func (m *Messages) Smarthost() string {
	if m.cfg.Smarthost == nil {
		return ""
	}
	return m.cfg.Smarthost.String()
}
