package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mailledger/mailledger/database"
)

// Reindex re-reads every stored message and rebuilds what the archive derives from it
// when the rules change (an upgrade, docs/operations.md): its search terms, its address
// roles, its sender and recipients as shown, and its date and parse note. The sealed files are decrypted in memory and never
// rewritten; the metadata rows keep their ids, and nothing else changes. A run works
// through the messages by id, a batch a transaction, and keeps its progress in
// reindex_state: a run that is killed resumes after the last batch it committed. Messages
// archived during the run are indexed by the new rules as they come; those erased during
// it are left alone (each batch locks its rows and rewrites only those still visible).

// ReindexOptions tune Reindex. Zero fields take the defaults.
type ReindexOptions struct {
	Batch   int // messages per transaction (default 100)
	Workers int // messages read and parsed at once (default GOMAXPROCS)
	// Progress, when set, is called after each batch with the messages done and the
	// messages of the run.
	Progress func(done, total int64)
	// OnFailure, when set, is told of each message that cannot be read or parsed (it is
	// left as it was and counted in Failed); it may be called from several goroutines.
	OnFailure func(id int64, err error)
	// Finish, when set, runs in the transaction that ends the run (and removes its
	// progress row), with the run's counts: the caller records the run there.
	Finish func(ctx context.Context, tx *database.Tx, r ReindexResult) error
}

// ReindexResult is what a run did.
type ReindexResult struct {
	Messages  int64     // messages re-read and rebuilt
	Failed    int64     // messages whose file could not be read or parsed: left as they were
	UpTo      int64     // the highest message id of the run (the archive's at its start)
	Resumed   bool      // the run went on from one that had stopped
	StartedAt time.Time // when the run (the first one, when resumed) began
}

// reindexState is the row of reindex_state.
type reindexState struct {
	ReindexResult
	lastID int64
}

const reindexName = "search"

// Reindex runs or resumes the rebuild described above.
func (a *Archive) Reindex(ctx context.Context, opt ReindexOptions) (ReindexResult, error) {
	if opt.Batch <= 0 {
		opt.Batch = 100
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	st, err := a.reindexStart(ctx)
	if err != nil {
		return ReindexResult{}, err
	}
	total, done, err := a.reindexCounts(ctx, st)
	if err != nil {
		return st.ReindexResult, err
	}
	for {
		batch, err := a.reindexBatch(ctx, st.lastID, st.UpTo, opt.Batch)
		if err != nil || len(batch) == 0 {
			if err == nil {
				err = a.reindexFinish(ctx, st, opt.Finish)
			}
			return st.ReindexResult, err
		}
		if err := a.reindexRead(ctx, batch, opt); err != nil {
			return st.ReindexResult, err
		}
		if err := a.reindexWrite(ctx, &st, batch); err != nil {
			return st.ReindexResult, err
		}
		if done += int64(len(batch)); opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
}

// reindexStart loads the state of a run that stopped, or starts one up to the archive's
// highest id.
func (a *Archive) reindexStart(ctx context.Context) (reindexState, error) {
	var st reindexState
	err := a.db.InTx(ctx, func(tx *database.Tx) error {
		var started any
		err := tx.QueryRow(ctx, `SELECT upto_id, last_id, messages, failed, started_at FROM reindex_state WHERE name = ?`+database.ForUpdate(tx.Dialect), reindexName).
			Scan(&st.UpTo, &st.lastID, &st.Messages, &st.Failed, &started)
		if err == nil {
			st.Resumed = true
			st.StartedAt, err = database.TimeValue(started)
			return err
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var upTo sql.NullInt64
		if err := tx.QueryRow(ctx, `SELECT MAX(id) FROM metadata`).Scan(&upTo); err != nil {
			return err
		}
		st.UpTo, st.StartedAt = upTo.Int64, time.Now().UTC()
		_, err = tx.Exec(ctx, `INSERT INTO reindex_state (name, upto_id, last_id, messages, failed, started_at) VALUES (?, ?, 0, 0, 0, ?)`,
			reindexName, st.UpTo, database.TimeArg(tx.Dialect, st.StartedAt))
		return err
	})
	if err != nil {
		return st, fmt.Errorf("reindex: start: %w", err)
	}
	return st, nil
}

// reindexCounts returns the visible messages of the run and those done before it resumed.
func (a *Archive) reindexCounts(ctx context.Context, st reindexState) (total, done int64, err error) {
	err = a.db.QueryRowContext(ctx, a.db.Rebind(`SELECT COUNT(*), COALESCE(SUM(CASE WHEN m.id <= ? THEN 1 ELSE 0 END), 0) FROM metadata m WHERE m.id <= ? AND `+visible),
		st.lastID, st.UpTo).Scan(&total, &done)
	if err != nil {
		return 0, 0, fmt.Errorf("reindex: count messages: %w", err)
	}
	return total, done, nil
}

// reindexItem is one message of a batch.
type reindexItem struct {
	id       int64
	tenant   string
	digest   string
	arrived  time.Time
	envelope []string // its SMTP envelope recipients, as stored
	msg      *Parsed  // nil when it could not be read
}

// reindexBatch returns the next visible messages after lastID, up to upTo.
func (a *Archive) reindexBatch(ctx context.Context, lastID, upTo int64, n int) ([]*reindexItem, error) {
	rows, err := a.db.QueryContext(ctx, a.db.Rebind(`SELECT m.id, m.tenant_id, m.digest, m.arrived FROM metadata m
		WHERE m.id > ? AND m.id <= ? AND `+visible+` ORDER BY m.id LIMIT ?`), lastID, upTo, n)
	if err != nil {
		return nil, fmt.Errorf("reindex: read messages: %w", err)
	}
	defer rows.Close()
	var out []*reindexItem
	byID := map[int64]*reindexItem{}
	for rows.Next() {
		it := &reindexItem{}
		var arrived any
		if err := rows.Scan(&it.id, &it.tenant, &it.digest, &arrived); err != nil {
			return nil, err
		}
		if it.arrived, err = database.TimeValue(arrived); err != nil {
			return nil, err
		}
		out = append(out, it)
		byID[it.id] = it
	}
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	args := make([]any, len(out))
	for i, it := range out {
		args[i] = it.id
	}
	env, err := a.db.QueryContext(ctx, a.db.Rebind(`SELECT id, "to" FROM rcpt WHERE kind = '`+KindEnvelope+`' AND id IN (`+database.InList(len(out))+`) ORDER BY id, "to"`), args...)
	if err != nil {
		return nil, fmt.Errorf("reindex: read envelopes: %w", err)
	}
	defer env.Close()
	for env.Next() {
		var id int64
		var to string
		if err := env.Scan(&id, &to); err != nil {
			return nil, err
		}
		byID[id].envelope = append(byID[id].envelope, to)
	}
	return out, env.Err()
}

// reindexRead reads and parses the batch's messages, workers at a time. A message that
// cannot be read keeps msg nil.
func (a *Archive) reindexRead(ctx context.Context, batch []*reindexItem, opt ReindexOptions) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(opt.Workers)
	failed := func(id int64, err error) {
		if opt.OnFailure != nil {
			opt.OnFailure(id, err)
		}
	}
	for _, it := range batch {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			raw, _, err := a.readFile(ctx, &Message{ID: it.id, TenantID: it.tenant, Digest: it.digest})
			if err != nil {
				failed(it.id, err)
				return nil
			}
			msg, err := a.parser.Parse(raw)
			if err != nil {
				failed(it.id, err)
				return nil
			}
			msg.addEnvelope(it.envelope)
			msg.Text, msg.Attachments = "", nil // only the terms, roles and dates are kept
			it.msg = msg
			return nil
		})
	}
	return g.Wait()
}

// reindexWrite rewrites the batch's derived rows in one transaction, for the messages
// still visible (locked against a concurrent erasure), and moves the progress row on.
func (a *Archive) reindexWrite(ctx context.Context, st *reindexState, batch []*reindexItem) error {
	next := *st
	next.lastID = batch[len(batch)-1].id
	err := a.db.InTx(ctx, func(tx *database.Tx) error {
		live, err := a.lockVisible(ctx, tx, batch)
		if err != nil {
			return err
		}
		var ids []int64
		var todo []*reindexItem
		for _, it := range batch {
			switch {
			case !live[it.id]:
				continue
			case it.msg == nil:
				next.Failed++
				continue
			}
			next.Messages++
			ids = append(ids, it.id)
			todo = append(todo, it)
		}
		// Out of the index first, then in again with the terms the current rules make.
		if err := a.index.remove(ctx, tx, ids); err != nil {
			return fmt.Errorf("remove index rows: %w", err)
		}
		var entries []indexEntry
		var rows childRows
		for _, it := range todo {
			key, err := a.rewriteMetadata(ctx, tx, it)
			if err != nil {
				return err
			}
			entries = append(entries, indexEntryOf(it.id, key, it.tenant, it.msg))
			rows.addAddresses(it.id, key, it.msg)
		}
		if err := a.index.add(ctx, tx, entries); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if err := removeIDs(ctx, tx, `DELETE FROM address_role WHERE id IN `, ids); err != nil {
			return fmt.Errorf("remove address roles: %w", err)
		}
		if err := removeIDs(ctx, tx, `DELETE FROM rcpt WHERE id IN `, ids); err != nil {
			return fmt.Errorf("remove recipients: %w", err)
		}
		if err := insertChunked(ctx, tx, roleInsert, rows.roles, roleCols); err != nil {
			return fmt.Errorf("insert address roles: %w", err)
		}
		if err := insertChunked(ctx, tx, `INSERT INTO rcpt (id, "to", todomain, kind) VALUES `, rows.rcpt, rcptCols); err != nil {
			return fmt.Errorf("insert recipients: %w", err)
		}
		_, err = tx.Exec(ctx, `UPDATE reindex_state SET last_id = ?, messages = ?, failed = ? WHERE name = ?`,
			next.lastID, next.Messages, next.Failed, reindexName)
		return err
	})
	if err != nil {
		return fmt.Errorf("reindex: messages %d to %d: %w", batch[0].id, next.lastID, err)
	}
	*st = next
	return nil
}

// lockVisible locks the batch's metadata rows that are still visible and returns their ids.
func (a *Archive) lockVisible(ctx context.Context, tx *database.Tx, batch []*reindexItem) (map[int64]bool, error) {
	args := make([]any, len(batch))
	for i, it := range batch {
		args[i] = it.id
	}
	rows, err := tx.Query(ctx, `SELECT m.id FROM metadata m WHERE m.id IN (`+database.InList(len(batch))+`) AND `+visible+database.ForUpdate(tx.Dialect), args...)
	if err != nil {
		return nil, fmt.Errorf("lock messages: %w", err)
	}
	defer rows.Close()
	live := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		live[id] = true
	}
	return live, rows.Err()
}

// rewriteMetadata stores the message's sender, date, date key and parse note as the
// current rules read them, and returns the date key.
func (a *Archive) rewriteMetadata(ctx context.Context, tx *database.Tx, it *reindexItem) (int64, error) {
	m := it.msg
	var sent any
	var note any
	if n := noteOf(m); n != "" {
		note = n
	}
	date := it.arrived // the message's date: its Date header, else its arrival
	if !m.Sent.IsZero() {
		sent = database.TimeArg(tx.Dialect, m.Sent)
		date = m.Sent
	}
	key := DateKey(date, it.id)
	_, err := tx.Exec(ctx, `UPDATE metadata SET "from" = ?, fromdomain = ?, sent = ?, msgdate = ?, datekey = ?, parse_note = ? WHERE id = ?`,
		database.Clip(m.From, 255), database.Clip(m.FromDomain, 255), sent, database.TimeArg(tx.Dialect, date), key, note, it.id)
	if err != nil {
		return 0, fmt.Errorf("update message %d: %w", it.id, err)
	}
	return key, nil
}

// reindexMarker is an index that records what a finished reindex rewrote: every message
// up to upTo was removed from it and added again.
type reindexMarker interface {
	reindexed(ctx context.Context, tx *database.Tx, upTo int64) error
}

// reindexFinish ends the run: its progress row goes, and Finish records it, in one
// transaction.
func (a *Archive) reindexFinish(ctx context.Context, st reindexState, finish func(context.Context, *database.Tx, ReindexResult) error) error {
	err := a.db.InTx(ctx, func(tx *database.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM reindex_state WHERE name = ?`, reindexName); err != nil {
			return err
		}
		if _, ok := a.index.(dayBlockWalker); ok {
			if err := markDayBlocksReady(ctx, tx, st.UpTo); err != nil {
				return err
			}
		}
		if m, ok := a.index.(reindexMarker); ok {
			if err := m.reindexed(ctx, tx, st.UpTo); err != nil {
				return err
			}
		}
		if finish != nil {
			return finish(ctx, tx, st.ReindexResult)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reindex: finish: %w", err)
	}
	return nil
}
