package eventstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/mailledger/mailledger/database"
)

// Checkpoint is a signed tree head in the C2SP checkpoint form: the note text is
// "<origin>\n<size>\n<base64 root>\n", followed by an Ed25519 signature line.
type Checkpoint struct {
	Origin    string
	Size      int64
	RootHash  Hash
	Note      []byte // the whole signed note
	CreatedAt time.Time
}

// CheckpointBody is the unsigned checkpoint text for a tree head.
func CheckpointBody(origin string, size int64, root Hash) string {
	return fmt.Sprintf("%s\n%d\n%s\n", origin, size, base64.StdEncoding.EncodeToString(root[:]))
}

// ErrBadCheckpoint means a checkpoint's signature or body does not verify.
var ErrBadCheckpoint = errors.New("bad checkpoint")

// OpenCheckpoint verifies a signed checkpoint note with the verifier key text vkey and
// parses its body.
func OpenCheckpoint(msg []byte, vkey string) (*Checkpoint, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("%w: public key: %w", ErrBadCheckpoint, err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	return parseCheckpointBody(n.Text, msg)
}

func parseCheckpointBody(text string, msg []byte) (*Checkpoint, error) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 {
		return nil, fmt.Errorf("%w: body has fewer than three lines", ErrBadCheckpoint)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 {
		return nil, fmt.Errorf("%w: size %q", ErrBadCheckpoint, lines[1])
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != 32 {
		return nil, fmt.Errorf("%w: root hash %q", ErrBadCheckpoint, lines[2])
	}
	return &Checkpoint{Origin: lines[0], Size: size, RootHash: toHash(root), Note: msg}, nil
}

// Signer signs checkpoints of one store with one key.
type Signer struct {
	store  *Store
	key    *Key
	origin string
}

// NewSigner returns a Signer; origin names the log in every checkpoint.
func NewSigner(store *Store, key *Key, origin string) (*Signer, error) {
	if store == nil || key == nil || origin == "" || strings.ContainsAny(origin, "\n") {
		return nil, errors.New("eventstore: signer needs a store, a key and a one-line origin")
	}
	return &Signer{store: store, key: key, origin: origin}, nil
}

// Key returns the signing key.
func (sg *Signer) Key() *Key { return sg.key }

// Origin returns the checkpoint origin line.
func (sg *Signer) Origin() string { return sg.origin }

// Sign writes a checkpoint of the current head unless the newest checkpoint already
// covers it, and returns the newest checkpoint.
func (sg *Signer) Sign(ctx context.Context) (*Checkpoint, error) {
	head, err := sg.store.Head(ctx)
	if err != nil {
		return nil, err
	}
	latest, err := sg.store.LatestCheckpoint(ctx)
	if err == nil && latest.Size >= head.Size {
		return latest, nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	msg, err := note.Sign(&note.Note{Text: CheckpointBody(sg.origin, head.Size, head.RootHash)}, sg.key.Signer)
	if err != nil {
		return nil, fmt.Errorf("sign checkpoint: %w", err)
	}
	cp := &Checkpoint{Origin: sg.origin, Size: head.Size, RootHash: head.RootHash, Note: msg, CreatedAt: timeNow()}
	if err := sg.store.saveCheckpoint(ctx, cp); err != nil {
		return nil, err
	}
	return sg.store.CheckpointAt(ctx, head.Size)
}

// saveCheckpoint writes cp in a write transaction, so that on SQLite it queues with the
// appends for the writer lock instead of busy-waiting against them.
func (s *Store) saveCheckpoint(ctx context.Context, cp *Checkpoint) error {
	err := s.db.InTx(ctx, func(tx *database.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO checkpoints (size, root_hash, note, created_at) VALUES (?, ?, ?, ?)`,
			cp.Size, cp.RootHash.String(), string(cp.Note), database.TimeArg(tx.Dialect, cp.CreatedAt))
		return err
	})
	if err != nil && !database.IsUniqueViolation(err) { // another node signed the same size first
		return fmt.Errorf("save checkpoint: %w", err)
	}
	return nil
}

const selectCheckpoint = `SELECT size, root_hash, note, created_at FROM checkpoints `

// LatestCheckpoint returns the checkpoint of the largest size.
func (s *Store) LatestCheckpoint(ctx context.Context) (*Checkpoint, error) {
	return s.oneCheckpoint(ctx, selectCheckpoint+`ORDER BY size DESC LIMIT 1`)
}

// CheckpointAt returns the checkpoint of exactly size events.
func (s *Store) CheckpointAt(ctx context.Context, size int64) (*Checkpoint, error) {
	return s.oneCheckpoint(ctx, selectCheckpoint+`WHERE size = ?`, size)
}

// CheckpointCovering returns the smallest checkpoint whose tree includes position.
func (s *Store) CheckpointCovering(ctx context.Context, position int64) (*Checkpoint, error) {
	return s.oneCheckpoint(ctx, selectCheckpoint+`WHERE size >= ? ORDER BY size LIMIT 1`, position)
}

func (s *Store) oneCheckpoint(ctx context.Context, q string, args ...any) (*Checkpoint, error) {
	var size int64
	var root, msg string
	var created any
	err := s.db.QueryRowContext(ctx, s.db.Rebind(q), args...).Scan(&size, &root, &msg, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: checkpoint", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	return decodeCheckpoint(size, root, msg, created)
}

func decodeCheckpoint(size int64, root, msg string, created any) (*Checkpoint, error) {
	h, err := ParseHash(root)
	if err != nil {
		return nil, err
	}
	at, err := database.TimeValue(created)
	if err != nil {
		return nil, err
	}
	origin, _, _ := strings.Cut(msg, "\n")
	return &Checkpoint{Origin: origin, Size: size, RootHash: h, Note: []byte(msg), CreatedAt: at}, nil
}

// Checkpoints returns every stored checkpoint in size order.
func (s *Store) Checkpoints(ctx context.Context) ([]*Checkpoint, error) {
	rows, err := s.db.QueryContext(ctx, selectCheckpoint+`ORDER BY size`)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	var out []*Checkpoint
	for rows.Next() {
		var size int64
		var root, msg string
		var created any
		if err := rows.Scan(&size, &root, &msg, &created); err != nil {
			return nil, err
		}
		cp, err := decodeCheckpoint(size, root, msg, created)
		if err != nil {
			return nil, err
		}
		out = append(out, cp)
	}
	return out, rows.Err()
}

// sameBody reports whether a verified note's body equals the expected text.
func sameBody(n *note.Note, want string) bool { return bytes.Equal([]byte(n.Text), []byte(want)) }
