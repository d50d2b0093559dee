package archive

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/mailledger/mailledger/database"
)

// fileWriters bounds the parallel file writes of one commit.
const fileWriters = 4

// maxDigestsPerQuery bounds the IN list of the duplicate check, well below every
// driver's placeholder limit.
const maxDigestsPerQuery = 500

// Commit stores a batch of prepared messages in one transaction: duplicates (same tenant
// and SHA-256, in the archive or earlier in the batch) are recognised and not stored
// again; new messages get their metadata, recipient, attachment and search rows, and
// their sealed files are written (atomically, fsynced) before the transaction commits, so
// a committed row always has its file.
func (a *Archive) Commit(ctx context.Context, batch []*Prepared) ([]Result, error) {
	results := make([]Result, len(batch))
	err := a.db.InTx(ctx, func(tx *database.Tx) error {
		files := a.newFiles(ctx)
		var rows childRows
		seen, err := existingDigests(ctx, tx, batch)
		if err != nil {
			return err
		}
		for i, p := range batch {
			key := digestKey(p.In.Tenant, hex.EncodeToString(p.Msg.Digest[:]))
			if id, dup := seen[key]; dup {
				results[i] = Result{ID: id, Duplicate: true}
				continue
			}
			id, err := a.commitOne(ctx, tx, p)
			if err != nil {
				_ = files.wait()
				return fmt.Errorf("%s: %w", p.In.Source, err)
			}
			files.add(MessageKey(p.In.Tenant, id), p.Sealed) // written while the next rows go in
			rows.add(id, p.Msg)
			results[i], seen[key] = Result{ID: id}, id
		}
		if err := rows.insert(ctx, tx); err != nil {
			_ = files.wait()
			return err
		}
		return files.wait()
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// fileWriter writes the sealed files of one commit in the background.
type fileWriter interface {
	add(key string, data []byte)
	wait() error
}

// newFiles returns the commit's file writer: a LocalStore batch (one folder sync per
// folder), or Put of each file on a few goroutines for other stores.
func (a *Archive) newFiles(ctx context.Context) fileWriter {
	if local, ok := a.blobs.(*LocalStore); ok {
		return local.newBatch(ctx)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fileWriters)
	return &putEach{blobs: a.blobs, ctx: gctx, g: g}
}

type putEach struct {
	blobs BlobStore
	ctx   context.Context
	g     *errgroup.Group
}

func (p *putEach) add(key string, data []byte) {
	p.g.Go(func() error { return p.blobs.Put(p.ctx, key, data) })
}

func (p *putEach) wait() error { return p.g.Wait() }

func digestKey(tenant, digest string) string { return tenant + "\x00" + digest }

// existingDigests finds the messages of the batch that their tenant already has: one
// query per tenant (and per maxDigestsPerQuery digests) rather than one per message,
// which also keeps a cached plan made on a still empty table from scanning it once per
// message. It returns their ids by digestKey.
func existingDigests(ctx context.Context, tx *database.Tx, batch []*Prepared) (map[string]int64, error) {
	byTenant := map[string][]any{}
	for _, p := range batch {
		byTenant[p.In.Tenant] = append(byTenant[p.In.Tenant], hex.EncodeToString(p.Msg.Digest[:]))
	}
	found := map[string]int64{}
	for tenant, digests := range byTenant {
		for start := 0; start < len(digests); start += maxDigestsPerQuery {
			chunk := digests[start:min(start+maxDigestsPerQuery, len(digests))]
			if err := findDigests(ctx, tx, tenant, chunk, found); err != nil {
				return nil, err
			}
		}
	}
	return found, nil
}

func findDigests(ctx context.Context, tx *database.Tx, tenant string, digests []any, found map[string]int64) error {
	q := `SELECT digest, id FROM metadata WHERE tenant_id = ? AND digest IN (` + database.InList(len(digests)) + `)`
	rows, err := tx.Query(ctx, q, append([]any{tenant}, digests...)...)
	if err != nil {
		return fmt.Errorf("check duplicates: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var digest string
		var id int64
		if err := rows.Scan(&digest, &id); err != nil {
			return err
		}
		found[digestKey(tenant, strings.TrimSpace(digest))] = id
	}
	return rows.Err()
}

// commitOne writes the rows of a message its tenant does not have yet and returns its id.
func (a *Archive) commitOne(ctx context.Context, tx *database.Tx, p *Prepared) (int64, error) {
	id, err := a.insertMetadata(ctx, tx, p, hex.EncodeToString(p.Msg.Digest[:]))
	if err != nil {
		return 0, err
	}
	if err := a.index.add(ctx, tx, id, p.In.Tenant, p.Msg); err != nil {
		return 0, fmt.Errorf("index: %w", err)
	}
	return id, nil
}

const metadataInsert = `INSERT INTO metadata (tenant_id, "from", fromdomain, subject, spam, arrived, sent, msgdate, retained, deleted, size, attachments, message_id, in_reply_to, refs, digest, bodydigest, key_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)`

func (a *Archive) insertMetadata(ctx context.Context, tx *database.Tx, p *Prepared, digest string) (int64, error) {
	m, d := p.Msg, tx.Dialect
	var sent any
	msgdate := database.TimeArg(d, p.In.Arrived) // the message's date: Date header, else arrival
	if !m.Sent.IsZero() {
		sent = database.TimeArg(d, m.Sent)
		msgdate = sent
	}
	spam := 0
	if m.Spam {
		spam = 1
	}
	args := []any{p.In.Tenant, clip(m.From, 255), clip(m.FromDomain, 255), cleanText(m.Subject), spam,
		database.TimeArg(d, p.In.Arrived), sent, msgdate, database.TimeArg(d, p.In.Arrived.Add(a.retention)),
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

// childRows gathers the rcpt and attachment rows of a whole batch, inserted together
// with a few multi-row statements instead of two per message.
type childRows struct {
	rcpt, att []any
}

const (
	rcptCols, attCols = 4, 6
	childChunk        = 400 // rows per statement
)

func (c *childRows) add(id int64, m *Parsed) {
	for _, group := range []struct {
		kind  string
		addrs []string
	}{{KindTo, m.To}, {KindCc, m.Cc}, {KindBcc, m.Bcc}, {KindEnvelope, m.Envelope}} {
		for _, addr := range group.addrs {
			c.rcpt = append(c.rcpt, id, clip(addr, 255), clip(domainOf(addr), 255), group.kind)
		}
	}
	for _, at := range m.Attachments {
		c.att = append(c.att, id, at.Seq, clip(cleanText(at.Name), 512), clip(at.Type, 255), at.Size, hex.EncodeToString(at.Digest[:]))
	}
}

func (c *childRows) insert(ctx context.Context, tx *database.Tx) error {
	if err := insertChunked(ctx, tx, `INSERT INTO rcpt (id, "to", todomain, kind) VALUES `, c.rcpt, rcptCols); err != nil {
		return fmt.Errorf("insert rcpt: %w", err)
	}
	if err := insertChunked(ctx, tx, `INSERT INTO attachment (message_id, seq, name, type, size, digest) VALUES `, c.att, attCols); err != nil {
		return fmt.Errorf("insert attachment: %w", err)
	}
	return nil
}

// insertChunked inserts the flat args, cols values a row, childChunk rows a statement.
func insertChunked(ctx context.Context, tx *database.Tx, prefix string, args []any, cols int) error {
	step := childChunk * cols
	for start := 0; start < len(args); start += step {
		chunk := args[start:min(start+step, len(args))]
		if _, err := tx.Exec(ctx, prefix+database.Placeholders(len(chunk)/cols, cols), chunk...); err != nil {
			return err
		}
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
