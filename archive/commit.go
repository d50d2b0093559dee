package archive

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/mailledger/mailledger/database"
)

// fileWriters bounds the parallel file writes of one commit.
const fileWriters = 4

// Commit stores a batch of prepared messages in one transaction: duplicates (same tenant
// and SHA-256, in the archive or earlier in the batch) are recognised and not stored
// again; new messages get their metadata, recipient, attachment and search rows, and
// their sealed files are written (atomically, fsynced) before the transaction commits, so
// a committed row always has its file.
func (a *Archive) Commit(ctx context.Context, batch []*Prepared) ([]Result, error) {
	results := make([]Result, len(batch))
	err := a.db.InTx(ctx, func(tx *database.Tx) error {
		var writes []fileWrite
		seen := map[string]int64{}
		for i, p := range batch {
			key := p.In.Tenant + "\x00" + hex.EncodeToString(p.Msg.Digest[:])
			if id, dup := seen[key]; dup {
				results[i] = Result{ID: id, Duplicate: true}
				continue
			}
			res, err := a.commitOne(ctx, tx, p)
			if err != nil {
				return fmt.Errorf("%s: %w", p.In.Source, err)
			}
			results[i], seen[key] = res, res.ID
			if !res.Duplicate {
				writes = append(writes, fileWrite{key: MessageKey(p.In.Tenant, res.ID), data: p.Sealed})
			}
		}
		return a.writeFiles(ctx, writes)
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

type fileWrite struct {
	key  string
	data []byte
}

func (a *Archive) writeFiles(ctx context.Context, writes []fileWrite) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fileWriters)
	for _, w := range writes {
		g.Go(func() error { return a.blobs.Put(gctx, w.key, w.data) })
	}
	return g.Wait()
}

func (a *Archive) commitOne(ctx context.Context, tx *database.Tx, p *Prepared) (Result, error) {
	digest := hex.EncodeToString(p.Msg.Digest[:])
	var id int64
	err := tx.QueryRow(ctx, `SELECT id FROM metadata WHERE tenant_id = ? AND digest = ?`, p.In.Tenant, digest).Scan(&id)
	if err == nil {
		return Result{ID: id, Duplicate: true}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Result{}, err
	}
	if id, err = a.insertMetadata(ctx, tx, p, digest); err != nil {
		return Result{}, err
	}
	if err := insertRecipients(ctx, tx, id, p.Msg); err != nil {
		return Result{}, err
	}
	if err := insertAttachments(ctx, tx, id, p.Msg.Attachments); err != nil {
		return Result{}, err
	}
	if err := a.index.add(ctx, tx, id, p.In.Tenant, p.Msg); err != nil {
		return Result{}, fmt.Errorf("index: %w", err)
	}
	return Result{ID: id}, nil
}

const metadataInsert = `INSERT INTO metadata (tenant_id, "from", fromdomain, subject, spam, arrived, sent, retained, deleted, size, attachments, message_id, in_reply_to, refs, digest, bodydigest, key_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)`

func (a *Archive) insertMetadata(ctx context.Context, tx *database.Tx, p *Prepared, digest string) (int64, error) {
	m, d := p.Msg, tx.Dialect
	var sent any
	if !m.Sent.IsZero() {
		sent = database.TimeArg(d, m.Sent)
	}
	spam := 0
	if m.Spam {
		spam = 1
	}
	args := []any{p.In.Tenant, clip(m.From, 255), clip(m.FromDomain, 255), cleanText(m.Subject), spam,
		database.TimeArg(d, p.In.Arrived), sent, database.TimeArg(d, p.In.Arrived.Add(a.retention)),
		m.Size, len(m.Attachments), clip(cleanText(m.MessageID), 512), clip(cleanText(m.InReplyTo), 512), cleanText(m.References),
		digest, hex.EncodeToString(m.BodyDigest[:]), a.keys.CurrentID()}
	if d == database.MySQL {
		res, err := tx.Exec(ctx, metadataInsert, args...)
		if err != nil {
			return 0, fmt.Errorf("insert metadata: %w", err)
		}
		return res.LastInsertId()
	}
	var id int64
	if err := tx.QueryRow(ctx, metadataInsert+` RETURNING id`, args...).Scan(&id); err != nil {
		return 0, fmt.Errorf("insert metadata: %w", err)
	}
	return id, nil
}

// Recipient kinds in rcpt.kind.
const (
	KindTo       = "to"
	KindCc       = "cc"
	KindBcc      = "bcc"
	KindEnvelope = "envelope"
)

func insertRecipients(ctx context.Context, tx *database.Tx, id int64, m *Parsed) error {
	var args []any
	rows := 0
	for _, group := range []struct {
		kind  string
		addrs []string
	}{{KindTo, m.To}, {KindCc, m.Cc}, {KindBcc, m.Bcc}, {KindEnvelope, m.Envelope}} {
		for _, addr := range group.addrs {
			args = append(args, id, clip(addr, 255), clip(domainOf(addr), 255), group.kind)
			rows++
		}
	}
	if rows == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO rcpt (id, "to", todomain, kind) VALUES `+placeholders(rows, 4), args...)
	if err != nil {
		return fmt.Errorf("insert rcpt: %w", err)
	}
	return nil
}

func insertAttachments(ctx context.Context, tx *database.Tx, id int64, atts []Attachment) error {
	if len(atts) == 0 {
		return nil
	}
	args := make([]any, 0, len(atts)*6)
	for _, at := range atts {
		args = append(args, id, at.Seq, clip(at.Name, 512), clip(at.Type, 255), at.Size, hex.EncodeToString(at.Digest[:]))
	}
	_, err := tx.Exec(ctx, `INSERT INTO attachment (message_id, seq, name, type, size, digest) VALUES `+placeholders(len(atts), 6), args...)
	if err != nil {
		return fmt.Errorf("insert attachment: %w", err)
	}
	return nil
}

func domainOf(addr string) string {
	if at := strings.LastIndexByte(addr, '@'); at >= 0 {
		return addr[at+1:]
	}
	return ""
}

// clip shortens s to at most n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func placeholders(rows, cols int) string {
	one := "(" + strings.Repeat("?,", cols-1) + "?)"
	return strings.Repeat(one+",", rows-1) + one
}
