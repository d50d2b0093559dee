package archive

import (
	"context"
	"crypto/md5"
	"database/sql"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/database"
)

// UnparsableError means a message's file passed the integrity checks but does not parse
// as a message. Err is the parser's error.
type UnparsableError struct {
	ID  int64
	Err error
}

// Error says which message and why; a reader that refuses the message puts its own
// reason before it.
func (e *UnparsableError) Error() string { return fmt.Sprintf("message %d: %v", e.ID, e.Err) }

// Unwrap returns the parser's error.
func (e *UnparsableError) Unwrap() error { return e.Err }

// Document is a stored message read whole, for a reader that hands messages over as they
// are (the eDiscovery export): its metadata, its original bytes (integrity checked), its
// parse and the hashes of the original. The archive reads and checks; what the reader
// makes of it is its own.
type Document struct {
	EmailID int64
	Arrived time.Time
	// Participants are the message's addresses by the address rule (address_role): its
	// senders, then its recipients, as their keys, as the erasure scope counts them.
	Participants []string
	Raw          []byte
	Msg          *Parsed
	MD5          [16]byte
	SHA256       [32]byte
	// AttachmentMD5 holds the MD5 of each of Msg.Attachments' decoded content, computed
	// while the content is at hand (ReadDocument runs in the reader's parallel workers), so
	// that a single writer downstream only formats rows.
	AttachmentMD5 [][16]byte
}

// Custodian is the document's custodian: its sender's address, lower-cased ("" when the
// message names none).
func (d *Document) Custodian() string { return d.Msg.From }

// ReadDocument reads a visible message of tenant whole: ErrNotFound when it does not
// exist there, or is erased or purged; ErrIntegrity (or ErrUnknownKey) when its file fails
// the checks; an *UnparsableError when it does not parse. Other errors are the database's
// or the blob store's.
func (a *Archive) ReadDocument(ctx context.Context, tenant string, id int64) (*Document, error) {
	m, doc, err := a.readDocumentRow(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	raw, digest, err := a.readFile(ctx, m)
	if err != nil {
		return nil, err
	}
	doc.Raw = raw
	return doc, doc.parse(a.parser, digest)
}

// ReadNative is ReadDocument for a reader that needs the original and the metadata, not
// the parse (an export of natives only): the original is decrypted and checked, and
// hashed with MD5, but not parsed; Msg holds the metadata stored at import (recipients in
// address order, attachment names without their content). Its errors are ReadDocument's,
// but for the parse's.
func (a *Archive) ReadNative(ctx context.Context, tenant string, id int64) (*Document, error) {
	m, doc, err := a.readDocumentRow(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if doc.Msg.Attachments, err = a.attachmentNames(ctx, id, len(doc.Msg.Attachments)); err != nil {
		return nil, err
	}
	raw, digest, err := a.readFile(ctx, m)
	if err != nil {
		return nil, err
	}
	doc.Raw, doc.SHA256, doc.MD5 = raw, digest, md5.Sum(raw)
	doc.Msg.Digest, doc.Msg.Size = digest, len(raw)
	return doc, nil
}

// attachmentNames reads the stored attachment rows of a message (n of them; none read
// when n is 0): sequence, name, type and size, without content.
func (a *Archive) attachmentNames(ctx context.Context, id int64, n int) ([]Attachment, error) {
	if n == 0 {
		return nil, nil
	}
	rows, err := a.db.QueryCached(ctx, `SELECT seq, name, type, size FROM attachment WHERE message_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("read attachments of %d: %w", id, err)
	}
	defer rows.Close()
	out := make([]Attachment, 0, n)
	for rows.Next() {
		var at Attachment
		if err := rows.Scan(&at.Seq, &at.Name, &at.Type, &at.Size); err != nil {
			return nil, fmt.Errorf("read attachments of %d: %w", id, err)
		}
		out = append(out, at)
	}
	return out, rows.Err()
}

// participants returns the addresses of a message by the address rule (address_role):
// its senders, then its recipients, each once, in key order within a role.
func (a *Archive) participants(ctx context.Context, id int64) ([]string, error) {
	rows, err := a.db.QueryCached(ctx, `SELECT addr FROM address_role WHERE id = ? ORDER BY role, addr`, id)
	if err != nil {
		return nil, fmt.Errorf("read the addresses of message %d: %w", id, err)
	}
	defer rows.Close()
	var out []string
	seen := map[string]bool{}
	for rows.Next() {
		var addr string
		if err := rows.Scan(&addr); err != nil {
			return nil, err
		}
		if !seen[addr] {
			seen[addr] = true
			out = append(out, addr)
		}
	}
	return out, rows.Err()
}

// readDocumentRow reads a document's metadata and its participants in one query: the
// metadata row joined with its recipient rows. doc.Msg holds the stored metadata (with
// len(Attachments) the stored count), which ReadDocument replaces by the parse.
func (a *Archive) readDocumentRow(ctx context.Context, tenant string, id int64) (*Message, *Document, error) {
	q := `SELECT m."from", m.arrived, m.digest, m.subject, m.sent, m.message_id, m.in_reply_to, m.refs, m.attachments, r."to", r.kind
		FROM metadata m LEFT JOIN rcpt r ON r.id = m.id
		WHERE m.id = ? AND m.tenant_id = ? AND ` + visible + ` ORDER BY r."to"`
	rows, err := a.db.QueryCached(ctx, q, id, tenant)
	if err != nil {
		return nil, nil, fmt.Errorf("read message %d: %w", id, err)
	}
	defer rows.Close()
	m := &Message{ID: id, TenantID: tenant}
	doc := &Document{EmailID: id, Msg: &Parsed{}}
	found := false
	for rows.Next() {
		var arrived, sent any
		var to, kind sql.NullString
		var attachments int
		p := doc.Msg
		if err := rows.Scan(&m.From, &arrived, &m.Digest, &p.Subject, &sent, &p.MessageID, &p.InReplyTo, &p.References, &attachments, &to, &kind); err != nil {
			return nil, nil, fmt.Errorf("read message %d: %w", id, err)
		}
		if !found {
			found = true
			if doc.Arrived, err = database.TimeValue(arrived); err != nil {
				return nil, nil, err
			}
			if sent != nil {
				if p.Sent, err = database.TimeValue(sent); err != nil {
					return nil, nil, err
				}
			}
			p.From, p.Attachments = m.From, make([]Attachment, attachments)
		}
		if to.Valid {
			p.addRecipient(kind.String, to.String)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read message %d: %w", id, err)
	}
	if !found {
		return nil, nil, ErrNotFound
	}
	if doc.Participants, err = a.participants(ctx, id); err != nil {
		return nil, nil, err
	}
	return m, doc, nil
}

// addRecipient adds a stored recipient of kind to the metadata.
func (p *Parsed) addRecipient(kind, addr string) {
	switch kind {
	case KindTo:
		p.To = append(p.To, addr)
	case KindCc:
		p.Cc = append(p.Cc, addr)
	case KindBcc:
		p.Bcc = append(p.Bcc, addr)
	case KindEnvelope:
		p.Envelope = append(p.Envelope, addr)
	}
}

// parse parses the document's original with the lean parse (parse_lean.go).
func (d *Document) parse(p *Parser, digest [32]byte) error {
	msg, sums, err := p.parseLean(d.Raw, digest)
	if err != nil {
		return &UnparsableError{ID: d.EmailID, Err: err}
	}
	d.Msg, d.SHA256, d.MD5, d.AttachmentMD5 = msg, msg.Digest, md5.Sum(d.Raw), sums
	return nil
}

// Sizes returns the size of each visible message of tenant among ids (at most a few
// hundred per call), by id; an id that is not one (another tenant's, erased, purged,
// unknown) is absent. A reader of many documents (the export) weighs them by it before
// reading them.
func (a *Archive) Sizes(ctx context.Context, tenant string, ids []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, tenant)
	for _, id := range ids {
		args = append(args, id)
	}
	q := `SELECT m.id, m.size FROM metadata m WHERE m.tenant_id = ? AND m.id IN (` + database.InList(len(ids)) + `) AND ` + visible
	rows, err := a.db.QueryContext(ctx, a.db.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("read message sizes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, size int64
		if err := rows.Scan(&id, &size); err != nil {
			return nil, fmt.Errorf("read message sizes: %w", err)
		}
		out[id] = size
	}
	return out, rows.Err()
}
