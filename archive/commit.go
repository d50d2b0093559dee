package archive

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

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
// a committed row always has its file. The rows go in with a few multi-row statements per
// batch where the dialect allows it, the files on other goroutines meanwhile.
func (a *Archive) Commit(ctx context.Context, batch []*Prepared) ([]Result, error) {
	results := make([]Result, len(batch))
	err := a.db.InTx(ctx, func(tx *database.Tx) error {
		if err := planForCurrentSize(ctx, tx); err != nil {
			return err
		}
		if err := a.recordStorageMode(ctx, tx); err != nil {
			return err
		}
		fresh, copyOf, err := a.sortOut(ctx, tx, batch, results)
		if err != nil {
			return err
		}
		ids, err := a.insertMetadata(ctx, tx, batch, fresh)
		if err != nil {
			return err
		}
		files := a.newFiles(ctx)
		var rows childRows
		entries := make([]indexEntry, len(fresh))
		for k, i := range fresh {
			p := batch[i]
			files.Add(MessageKey(p.In.Tenant, ids[k]), p.Sealed) // written while the rows go in
			key := DateKey(msgDate(p), ids[k])
			rows.add(ids[k], key, p.Msg)
			entries[k] = indexEntryOf(ids[k], key, p.In.Tenant, p.Msg)
			results[i] = Result{ID: ids[k]}
		}
		for i, first := range copyOf {
			results[i] = Result{ID: results[first].ID, Duplicate: true}
		}
		if err := rows.insert(ctx, tx); err != nil {
			_ = files.Wait()
			return err
		}
		if err := a.index.add(ctx, tx, entries); err != nil {
			_ = files.Wait()
			return fmt.Errorf("index: %w", err)
		}
		return files.Wait()
	})
	if err != nil {
		return nil, err
	}
	a.modeRecorded.Store(true)
	return results, nil
}

// planForCurrentSize makes PostgreSQL plan the batch's statements for the tables as they
// are now. pgx prepares and caches statements per connection, and after five executions
// PostgreSQL may keep a generic plan made while the table was still small: the duplicate
// check then scanned the whole of metadata for every batch (150 ms a batch at 10,000
// messages, growing with the archive) until an ANALYZE invalidated the plan, which never
// comes where autovacuum is off. Planning the few statements of a batch costs far less.
func planForCurrentSize(ctx context.Context, tx *database.Tx) error {
	if tx.Dialect != database.Postgres {
		return nil
	}
	_, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_custom_plan`)
	return err
}

// sortOut divides the batch: spam under the discard policy and messages their tenant
// already has get their Result here;
// fresh lists the positions of the messages to store, and copyOf maps the position of a
// message that repeats an earlier one of the batch to that earlier position.
func (a *Archive) sortOut(ctx context.Context, tx *database.Tx, batch []*Prepared, results []Result) (fresh []int, copyOf map[int]int, err error) {
	seen, err := existingDigests(ctx, tx, batch)
	if err != nil {
		return nil, nil, err
	}
	copyOf = map[int]int{}
	first := map[string]int{}
	for i, p := range batch {
		key := digestKey(p.In.Tenant, hex.EncodeToString(p.Msg.Digest[:]))
		if p.Msg.Spam && a.spam.discard {
			results[i] = Result{Discarded: true}
		} else if id, dup := seen[key]; dup {
			results[i] = Result{ID: id, Duplicate: true}
		} else if earlier, dup := first[key]; dup {
			copyOf[i] = earlier
		} else {
			first[key] = i
			fresh = append(fresh, i)
		}
	}
	return fresh, copyOf, nil
}

// newFiles returns the commit's file writer: the store's own batch where it has one
// (BatchStore: LocalStore and s3store sync a commit's files together), else Put of each
// file on a few goroutines.
func (a *Archive) newFiles(ctx context.Context) FileBatch {
	if b, ok := a.blobs.(BatchStore); ok {
		return b.NewBatch(ctx)
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

func (p *putEach) Add(key string, data []byte) {
	p.g.Go(func() error { return p.blobs.Put(p.ctx, key, data) })
}

func (p *putEach) Wait() error { return p.g.Wait() }

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

const metadataColumns = `tenant_id, "from", fromdomain, subject, spam, arrived, sent, msgdate, retained, deleted, size, attachments, message_id, in_reply_to, refs, digest, bodydigest, key_id, parse_note`

const metadataInsert = `INSERT INTO metadata (` + metadataColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// metadataChunk bounds the rows of one multi-row metadata INSERT (20 arguments a row).
const metadataChunk = 400

// insertMetadata writes the metadata rows of batch[fresh…] and returns their ids in the
// same order. PostgreSQL and SQLite take the ids first (PostgreSQL from the table's
// sequence in one query; SQLite, whose IMMEDIATE transaction holds the only write lock,
// after the highest it gave) and write the rows with their date keys in multi-row
// INSERTs: a few statements a batch instead of two a message. MySQL inserts row by row,
// reads the id the database gave and sets the date key after, so an error names the
// message's source.
func (a *Archive) insertMetadata(ctx context.Context, tx *database.Tx, batch []*Prepared, fresh []int) ([]int64, error) {
	if tx.Dialect != database.MySQL {
		return a.insertMetadataRows(ctx, tx, batch, fresh)
	}
	ids := make([]int64, len(fresh))
	for k, i := range fresh {
		id, err := a.insertOneMetadata(ctx, tx, batch[i])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", batch[i].In.Source, err)
		}
		ids[k] = id
	}
	return ids, nil
}

// insertOneMetadata inserts p's row, then sets its date key, which needs the id.
func (a *Archive) insertOneMetadata(ctx context.Context, tx *database.Tx, p *Prepared) (int64, error) {
	res, err := tx.Exec(ctx, metadataInsert, a.metadataArgs(tx.Dialect, p)...)
	if err != nil {
		return 0, fmt.Errorf("insert metadata: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `UPDATE metadata SET datekey = ? WHERE id = ?`, DateKey(msgDate(p), id), id); err != nil {
		return 0, fmt.Errorf("set date key: %w", err)
	}
	return id, nil
}

func (a *Archive) insertMetadataRows(ctx context.Context, tx *database.Tx, batch []*Prepared, fresh []int) ([]int64, error) {
	if len(fresh) == 0 {
		return nil, nil
	}
	ids, err := nextMetadataIDs(ctx, tx, len(fresh))
	if err != nil {
		return nil, err
	}
	row := `(?, ?, ` + database.InList(9) + `, 0, ` + database.InList(9) + `)`
	for start := 0; start < len(fresh); start += metadataChunk {
		end := min(start+metadataChunk, len(fresh))
		var args []any
		for k := start; k < end; k++ {
			p := batch[fresh[k]]
			args = append(append(args, ids[k], DateKey(msgDate(p), ids[k])), a.metadataArgs(tx.Dialect, p)...)
		}
		q := `INSERT INTO metadata (id, datekey, ` + metadataColumns + `) VALUES ` + database.Rows(end-start, row)
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return nil, fmt.Errorf("insert metadata: %w", err)
		}
	}
	return ids, nil
}

// nextMetadataIDs takes n ids for new metadata rows, in ascending order so that ids follow
// the order of the batch: on PostgreSQL from the table's sequence, on SQLite the n after
// the highest AUTOINCREMENT gave (sqlite_sequence; the transaction is IMMEDIATE, so no
// other writer can take them meanwhile, and inserting them moves the sequence on).
func nextMetadataIDs(ctx context.Context, tx *database.Tx, n int) ([]int64, error) {
	if tx.Dialect == database.SQLite {
		var last int64
		err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'metadata'`).Scan(&last)
		if err != nil {
			return nil, fmt.Errorf("allocate metadata ids: %w", err)
		}
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = last + 1 + int64(i)
		}
		return ids, nil
	}
	rows, err := tx.Query(ctx, `SELECT nextval(pg_get_serial_sequence('metadata', 'id')) FROM generate_series(1, ?)`, n)
	if err != nil {
		return nil, fmt.Errorf("allocate metadata ids: %w", err)
	}
	defer rows.Close()
	ids := make([]int64, 0, n)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) != n {
		return nil, fmt.Errorf("allocate metadata ids: got %d of %d", len(ids), n)
	}
	slices.Sort(ids)
	return ids, nil
}

// msgDate is the date of p's message: its Date header, else its arrival (metadata.msgdate).
func msgDate(p *Prepared) time.Time {
	if !p.Msg.Sent.IsZero() {
		return p.Msg.Sent
	}
	return p.In.Arrived
}

// metadataArgs are the values of metadataColumns (deleted excepted: always 0) for p.
func (a *Archive) metadataArgs(d database.Dialect, p *Prepared) []any {
	m := p.Msg
	var sent any
	if !m.Sent.IsZero() {
		sent = database.TimeArg(d, m.Sent)
	}
	msgdate := database.TimeArg(d, msgDate(p))
	spam, retention := 0, a.retentionOf(p)
	if m.Spam {
		spam = 1
	}
	var note any // NULL: the message was read as written
	if n := noteOf(m); n != "" {
		note = n
	}
	return []any{p.In.Tenant, database.Clip(m.From, 255), database.Clip(m.FromDomain, 255), cleanText(m.Subject), spam,
		database.TimeArg(d, p.In.Arrived), sent, msgdate, database.TimeArg(d, p.In.Arrived.Add(retention)),
		m.Size, len(m.Attachments), database.Clip(cleanText(m.MessageID), 512), database.Clip(cleanText(m.InReplyTo), 512), cleanText(m.References),
		hex.EncodeToString(m.Digest[:]), hex.EncodeToString(m.BodyDigest[:]), a.keys.CurrentID(), note}
}

// noteOf is the parse_note of m: its parse and date notes, "" when it was read as written.
func noteOf(m *Parsed) string {
	return database.Clip(cleanText(joinNotes(m.ParseNote, m.DateNote)), 255)
}
