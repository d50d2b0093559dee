package eventstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/mailledger/mailledger/database"
)

// The tree is RFC 6962's: leaves are the events' leaf hashes in position order (leaf
// index = position - 1). Interior nodes of every completed perfect subtree of at least
// 2^minStoredLevel leaves are stored in merkle_nodes as the tree grows (one row per 16
// events); the few lower nodes a proof needs are recomputed from at most 8 leaf hashes.
// ledger_head keeps the compact range of the whole tree, so an append costs O(log n) and
// a proof reads O(log n) rows.

// minStoredLevel is the lowest interior level kept in merkle_nodes.
const minStoredLevel = 4

var rangeFactory = &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}

type treeNode struct {
	level uint
	index uint64
	hash  Hash
}

type headState struct {
	size  int64
	chain Hash
	tree  *compact.Range
}

func toHash(b []byte) Hash {
	var h Hash
	copy(h[:], b)
	return h
}

// lockHead reads ledger_head under the lock that serialises all appends: a row lock on
// PostgreSQL and MySQL, the IMMEDIATE transaction's writer lock on SQLite.
func lockHead(ctx context.Context, tx *database.Tx) (*headState, error) {
	var size int64
	var chain, state string
	q := `SELECT size, chain_hash, merkle_state FROM ledger_head WHERE id = 1` + database.ForUpdate(tx.Dialect)
	if err := tx.QueryRow(ctx, q).Scan(&size, &chain, &state); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, errNoHead
		}
		return nil, fmt.Errorf("lock ledger head: %w", err)
	}
	return decodeHead(size, chain, state)
}

// errCorruptHead means ledger_head cannot be decoded: its hashes or its Merkle state do
// not fit its size.
var errCorruptHead = errors.New("ledger_head is corrupt")

func decodeHead(size int64, chain, state string) (*headState, error) {
	h, err := decodeHeadFields(size, chain, state)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errCorruptHead, err)
	}
	return h, nil
}

func decodeHeadFields(size int64, chain, state string) (*headState, error) {
	c, err := ParseHash(chain)
	if err != nil {
		return nil, fmt.Errorf("ledger head chain: %w", err)
	}
	var hashes [][]byte
	if state != "" {
		for _, part := range strings.Split(state, ",") {
			h, err := ParseHash(part)
			if err != nil {
				return nil, fmt.Errorf("ledger head merkle state: %w", err)
			}
			hashes = append(hashes, h[:])
		}
	}
	tree, err := rangeFactory.NewRange(0, uint64(size), hashes)
	if err != nil {
		return nil, fmt.Errorf("ledger head merkle state: %w", err)
	}
	return &headState{size: size, chain: c, tree: tree}, nil
}

func encodeRange(r *compact.Range) string {
	parts := make([]string, len(r.Hashes()))
	for i, h := range r.Hashes() {
		parts[i] = toHash(h).String()
	}
	return strings.Join(parts, ",")
}

func headUpdate(d database.Dialect, h *headState) Statement {
	return Statement{`UPDATE ledger_head SET size = ?, chain_hash = ?, merkle_state = ?, updated_at = ? WHERE id = 1`,
		[]any{h.size, h.chain.String(), encodeRange(h.tree), database.TimeArg(d, timeNow())}}
}

func rootOf(r *compact.Range) Hash {
	if r.End() == 0 {
		return toHash(rfc6962.DefaultHasher.EmptyRoot())
	}
	root, _ := r.GetRootHash(nil)
	return toHash(root)
}

// Head returns the ledger's current size, chain hash and Merkle root.
func (s *Store) Head(ctx context.Context) (Head, error) {
	var size int64
	var chain, state string
	err := s.db.QueryRowContext(ctx, `SELECT size, chain_hash, merkle_state FROM ledger_head WHERE id = 1`).Scan(&size, &chain, &state)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Head{}, errNoHead
		}
		return Head{}, fmt.Errorf("read ledger head: %w", err)
	}
	h, err := decodeHead(size, chain, state)
	if err != nil {
		return Head{}, err
	}
	return Head{Size: h.size, ChainHash: h.chain, RootHash: rootOf(h.tree)}, nil
}

// nodeHashes fetches the hashes of the given complete nodes: stored interior nodes from
// merkle_nodes, lower ones recomputed from the leaf hashes in events.
func (s *Store) nodeHashes(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	out := make([][]byte, len(ids))
	for i, id := range ids {
		var h []byte
		var err error
		if id.Level >= minStoredLevel {
			h, err = s.storedNode(ctx, id)
		} else {
			h, err = s.subtreeFromLeaves(ctx, id)
		}
		if err != nil {
			return nil, err
		}
		out[i] = h
	}
	return out, nil
}

func (s *Store) storedNode(ctx context.Context, id compact.NodeID) ([]byte, error) {
	var hex string
	err := s.db.QueryRowContext(ctx, s.db.Rebind(`SELECT hash FROM merkle_nodes WHERE level = ? AND idx = ?`), id.Level, int64(id.Index)).Scan(&hex)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: merkle node level %d index %d", ErrNotFound, id.Level, id.Index)
	}
	if err != nil {
		return nil, fmt.Errorf("read merkle node: %w", err)
	}
	h, err := ParseHash(hex)
	return h[:], err
}

// subtreeFromLeaves hashes the perfect subtree id from its leaves.
func (s *Store) subtreeFromLeaves(ctx context.Context, id compact.NodeID) ([]byte, error) {
	begin, end := id.Coverage()
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(`SELECT leaf_hash FROM events WHERE position > ? AND position <= ? ORDER BY position`), int64(begin), int64(end))
	if err != nil {
		return nil, fmt.Errorf("read leaves: %w", err)
	}
	defer rows.Close()
	r := rangeFactory.NewEmptyRange(begin)
	for rows.Next() {
		var hex string
		if err := rows.Scan(&hex); err != nil {
			return nil, err
		}
		leaf, err := ParseHash(hex)
		if err != nil {
			return nil, err
		}
		if err := r.Append(leaf[:], nil); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if r.End() != end || len(r.Hashes()) != 1 {
		return nil, fmt.Errorf("%w: leaves %d..%d", ErrNotFound, begin+1, end)
	}
	return r.Hashes()[0], nil
}

func (s *Store) checkSize(ctx context.Context, size int64) error {
	head, err := s.Head(ctx)
	if err != nil {
		return err
	}
	if size < 0 || size > head.Size {
		return fmt.Errorf("%w: tree size %d (ledger has %d events)", ErrNotFound, size, head.Size)
	}
	return nil
}

// RootAt returns the Merkle root of the first size leaves.
func (s *Store) RootAt(ctx context.Context, size int64) (Hash, error) {
	if err := s.checkSize(ctx, size); err != nil {
		return Hash{}, err
	}
	ids := compact.RangeNodes(0, uint64(size), nil)
	hashes, err := s.nodeHashes(ctx, ids)
	if err != nil {
		return Hash{}, err
	}
	r, err := rangeFactory.NewRange(0, uint64(size), hashes)
	if err != nil {
		return Hash{}, err
	}
	return rootOf(r), nil
}

// InclusionProof proves that the event at position is leaf position-1 of the tree of the
// first size events. It verifies with proof.VerifyInclusion(rfc6962.DefaultHasher,
// position-1, size, leafHash, proof, root).
func (s *Store) InclusionProof(ctx context.Context, position, size int64) ([][]byte, error) {
	if position < 1 || position > size {
		return nil, fmt.Errorf("%w: position %d is not in a tree of size %d", ErrNotFound, position, size)
	}
	if err := s.checkSize(ctx, size); err != nil {
		return nil, err
	}
	nodes, err := proof.Inclusion(uint64(position-1), uint64(size))
	if err != nil {
		return nil, err
	}
	return s.rehash(ctx, nodes)
}

// ConsistencyProof proves that the tree of size from is a prefix of the tree of size to.
func (s *Store) ConsistencyProof(ctx context.Context, from, to int64) ([][]byte, error) {
	if from < 0 || from > to {
		return nil, fmt.Errorf("%w: consistency from %d to %d", ErrNotFound, from, to)
	}
	if err := s.checkSize(ctx, to); err != nil {
		return nil, err
	}
	nodes, err := proof.Consistency(uint64(from), uint64(to))
	if err != nil {
		return nil, err
	}
	return s.rehash(ctx, nodes)
}

func (s *Store) rehash(ctx context.Context, nodes proof.Nodes) ([][]byte, error) {
	hashes, err := s.nodeHashes(ctx, nodes.IDs)
	if err != nil {
		return nil, err
	}
	return nodes.Rehash(hashes, rfc6962.DefaultHasher.HashChildren)
}

// LockHead takes the ledger-head lock inside tx, holding off every append until tx ends.
func LockHead(ctx context.Context, tx *database.Tx) error {
	_, err := lockHead(ctx, tx)
	return err
}
