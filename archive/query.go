package archive

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mailledger/mailledger/database"
)

// Message is the metadata of one archived message, as the API shows it.
type Message struct {
	ID          int64      `json:"id"`
	TenantID    string     `json:"-"`
	MessageID   string     `json:"message_id"`
	From        string     `json:"from"`
	To          []string   `json:"to"`
	Cc          []string   `json:"cc"`
	Subject     string     `json:"subject"`
	Sent        *time.Time `json:"sent"`
	Arrived     time.Time  `json:"arrived"`
	Size        int64      `json:"size"`
	Attachments int        `json:"attachments"`
	Retained    time.Time  `json:"retained"`
	Spam        bool       `json:"spam"`
	Digest      string     `json:"digest"`
	// ParseNote says why the message's MIME part tree was read only in part (nested deeper
	// than MaxPartDepth, more than MaxParts parts, …): its text and attachments are those of
	// the parts read, its raw bytes whole. nil when the tree was read whole.
	ParseNote *string `json:"parse_note"`
	// Tags are the tags the header checks gave it when it was archived.
	Tags []string `json:"tags"`
}

const messageColumns = `m.id, m.tenant_id, m.message_id, m."from", m.subject, m.sent, m.arrived, m.size, m.attachments, m.retained, m.spam, m.digest, m.parse_note`

// scanMessages reads the rows of a message query and their recipients and tags.
func (a *Archive) scanMessages(ctx context.Context, rows *sql.Rows, err error) ([]Message, error) {
	out, err := scanRows(rows, err)
	if err != nil {
		return nil, err
	}
	return out, a.fillMessages(ctx, out)
}

// scanRows reads the rows of a message query, nothing more.
func scanRows(rows *sql.Rows, err error) ([]Message, error) {
	if err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	defer rows.Close()
	out := []Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// fillMessages reads the recipients and tags of msgs.
func (a *Archive) fillMessages(ctx context.Context, msgs []Message) error {
	if err := a.fillRecipients(ctx, msgs); err != nil {
		return err
	}
	return a.fillTags(ctx, msgs)
}

func scanMessage(rows *sql.Rows) (Message, error) {
	var m Message
	var sent, arrived, retained any
	var spam int
	var note sql.NullString
	if err := rows.Scan(&m.ID, &m.TenantID, &m.MessageID, &m.From, &m.Subject, &sent, &arrived, &m.Size, &m.Attachments, &retained, &spam, &m.Digest, &note); err != nil {
		return m, fmt.Errorf("scan message: %w", err)
	}
	if note.Valid {
		m.ParseNote = &note.String
	}
	var err error
	if sent != nil {
		t, err := database.TimeValue(sent)
		if err != nil {
			return m, err
		}
		m.Sent = &t
	}
	if m.Arrived, err = database.TimeValue(arrived); err != nil {
		return m, err
	}
	if m.Retained, err = database.TimeValue(retained); err != nil {
		return m, err
	}
	m.Spam = spam != 0
	return m, nil
}

func (a *Archive) fillRecipients(ctx context.Context, msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	byID := map[int64]*Message{}
	args := make([]any, len(msgs))
	for i := range msgs {
		msgs[i].To, msgs[i].Cc = []string{}, []string{}
		byID[msgs[i].ID] = &msgs[i]
		args[i] = msgs[i].ID
	}
	q := `SELECT id, "to", kind FROM rcpt WHERE kind IN ('to', 'cc') AND id IN (` + database.InList(len(msgs)) + `) ORDER BY id, kind`
	var rows *sql.Rows
	var err error
	if len(msgs) == 1 { // one message's read, the fixed text that runs per message
		rows, err = a.db.QueryCached(ctx, q, args...)
	} else {
		rows, err = a.db.QueryContext(ctx, a.db.Rebind(q), args...)
	}
	if err != nil {
		return fmt.Errorf("read recipients: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var to, kind string
		if err := rows.Scan(&id, &to, &kind); err != nil {
			return err
		}
		if m := byID[id]; m != nil && kind == KindTo {
			m.To = append(m.To, to)
		} else if m != nil {
			m.Cc = append(m.Cc, to)
		}
	}
	return rows.Err()
}

// Get returns a visible message of tenant; ErrNotFound when there is none (another
// tenant's message included).
func (a *Archive) Get(ctx context.Context, tenant string, id int64) (*Message, error) {
	return a.GetFor(ctx, tenant, id, "")
}

// GetFor is Get restricted to messages that participant sent or received; an empty
// participant does not restrict.
func (a *Archive) GetFor(ctx context.Context, tenant string, id int64, participant string) (*Message, error) {
	where, args := `WHERE m.id = ? AND m.tenant_id = ? AND `+visible, []any{id, tenant}
	if participant != "" {
		where += ` AND ` + participantCondition
		args = append(args, addressKey(participant))
	}
	// One of two fixed texts, run once per message read: a cached statement.
	rows, err := a.db.QueryCached(ctx, `SELECT `+messageColumns+` FROM metadata m `+where, args...)
	msgs, err := a.scanMessages(ctx, rows, err)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, ErrNotFound
	}
	return &msgs[0], nil
}

// Raw returns the original bytes of a visible message, after checking the GCM tag and the
// SHA-256 digest; a mismatch is ErrIntegrity and nothing is returned.
func (a *Archive) Raw(ctx context.Context, tenant string, id int64) ([]byte, error) {
	return a.RawFor(ctx, tenant, id, "")
}

// RawFor is Raw restricted to a participant's messages (see GetFor).
func (a *Archive) RawFor(ctx context.Context, tenant string, id int64, participant string) ([]byte, error) {
	m, err := a.GetFor(ctx, tenant, id, participant)
	if err != nil {
		return nil, err
	}
	raw, _, err := a.readFile(ctx, m)
	return raw, err
}

func (a *Archive) readFile(ctx context.Context, m *Message) ([]byte, [32]byte, error) {
	digest, err := parseDigest(m.Digest)
	if err != nil {
		return nil, digest, fmt.Errorf("%w: stored digest: %w", ErrIntegrity, err)
	}
	sealed, err := a.blobs.Get(ctx, MessageKey(m.TenantID, m.ID))
	if err != nil {
		if errors.Is(err, ErrBlobNotFound) {
			return nil, digest, fmt.Errorf("%w: message %d has no file", ErrIntegrity, m.ID)
		}
		return nil, digest, err
	}
	raw, err := a.keys.Open(m.TenantID, sealed, digest)
	if err != nil {
		return nil, digest, fmt.Errorf("message %d: %w", m.ID, err)
	}
	return raw, digest, nil
}

// Text returns the text of a visible message: the text/plain body, else text from HTML.
func (a *Archive) Text(ctx context.Context, tenant string, id int64, participant string) (string, error) {
	raw, err := a.RawFor(ctx, tenant, id, participant)
	if err != nil {
		return "", err
	}
	msg, _, err := a.parser.parse(raw, true) // no terms, roles or digests: only the text
	if err != nil {
		return "", err
	}
	return msg.Text, nil
}

// RemoveFromIndex takes a message out of the full-text index (erasure and purge).
func (a *Archive) RemoveFromIndex(ctx context.Context, tx *database.Tx, id int64) error {
	return a.index.remove(ctx, tx, []int64{id})
}

func parseDigest(s string) ([32]byte, error) {
	var d [32]byte
	s = strings.TrimSpace(s)
	if len(s) != hex.EncodedLen(len(d)) {
		return d, fmt.Errorf("bad digest %q", s)
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return d, fmt.Errorf("bad digest %q", s)
	}
	return d, nil
}
