package eventstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"golang.org/x/mod/sumdb/note"
)

// VerifyError names the first position (or checkpoint size) where the ledger is not what
// its hashes say. When a stored Merkle node is bad, Node names it and Position is the
// last position it covers.
type VerifyError struct {
	Position int64
	Node     *NodeRef
	Reason   string
}

// NodeRef names one interior node of the Merkle tree: the perfect subtree at Level over
// the leaves Index*2^Level up to (Index+1)*2^Level - 1, that is the positions
// Index*2^Level + 1 up to (Index+1)*2^Level.
type NodeRef struct {
	Level uint
	Index uint64
}

func (e *VerifyError) Error() string {
	if e.Node != nil {
		return fmt.Sprintf("ledger broken at position %d: merkle node level %d index %d: %s", e.Position, e.Node.Level, e.Node.Index, e.Reason)
	}
	return fmt.Sprintf("ledger broken at position %d: %s", e.Position, e.Reason)
}

// VerifyReport is the outcome of a successful Verify.
type VerifyReport struct {
	Events      int64
	ChainHash   Hash
	RootHash    Hash
	Checkpoints int
}

// verifyPage is how many events Verify reads per query.
const verifyPage = 20000

// Verify re-hashes every stored event in position order and checks positions (no gap),
// stream versions (1, 2, 3… per stream), leaf hashes, the hash chain, the stored interior
// Merkle nodes (merkle_nodes, which proofs read: each recomputed from the events, none
// missing and none extra), the Merkle roots of every stored checkpoint and their
// signatures against vkey, and finally ledger_head.
// progress, when not nil, is called after each page with the events checked so far and
// the head size. A broken ledger returns a *VerifyError naming the first bad position.
func (s *Store) Verify(ctx context.Context, vkey string, progress func(done, total int64)) (*VerifyReport, error) {
	head, err := s.Head(ctx)
	if errors.Is(err, errCorruptHead) {
		return nil, &VerifyError{Position: 0, Reason: err.Error()}
	}
	if err != nil {
		return nil, err
	}
	cps, err := s.Checkpoints(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkSignatures(cps, vkey); err != nil {
		return nil, err
	}
	w := &walker{streams: map[string]int64{}, tree: rangeFactory.NewEmptyRange(0), cps: cps, nodes: newNodeChecker(s)}
	if err := w.checkpointsAt(0); err != nil { // checkpoints of the empty ledger
		return nil, err
	}
	for {
		recs, err := s.ReadRaw(ctx, w.pos, verifyPage)
		if err != nil {
			return nil, err
		}
		if err := w.page(ctx, recs); err != nil {
			return nil, err
		}
		if progress != nil {
			progress(w.pos, head.Size)
		}
		if len(recs) < verifyPage {
			break
		}
	}
	if err := w.nodes.checkExtra(ctx); err != nil {
		return nil, err
	}
	return w.finish(head)
}

// page walks recs, then compares the Merkle nodes they completed with the stored ones. A
// bad node completed before a bad event is named first.
func (w *walker) page(ctx context.Context, recs []Record) error {
	for i := range recs {
		if err := w.step(&recs[i]); err != nil {
			if nodeErr := w.nodes.check(ctx); nodeErr != nil {
				return nodeErr
			}
			return err
		}
	}
	return w.nodes.check(ctx)
}

func checkSignatures(cps []*Checkpoint, vkey string) error {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return fmt.Errorf("%w: public key: %w", ErrBadCheckpoint, err)
	}
	for _, cp := range cps {
		n, err := note.Open(cp.Note, note.VerifierList(v))
		if err != nil {
			return &VerifyError{Position: cp.Size, Reason: fmt.Sprintf("checkpoint of size %d: signature does not verify: %v", cp.Size, err)}
		}
		if !sameBody(n, CheckpointBody(cp.Origin, cp.Size, cp.RootHash)) {
			return &VerifyError{Position: cp.Size, Reason: fmt.Sprintf("checkpoint of size %d: signed body differs from its size or root_hash columns", cp.Size)}
		}
	}
	return nil
}

type walker struct {
	pos     int64
	chain   Hash
	streams map[string]int64
	tree    *compact.Range
	cps     []*Checkpoint
	nextCP  int
	nodes   *nodeChecker
}

func (w *walker) step(r *Record) error {
	want := w.pos + 1
	if r.Position != want {
		return &VerifyError{Position: want, Reason: fmt.Sprintf("event missing: found position %d next", r.Position)}
	}
	if v := w.streams[r.StreamID] + 1; r.StreamVersion != v {
		return &VerifyError{Position: want, Reason: fmt.Sprintf("stream %s has version %d, want %d", r.StreamID, r.StreamVersion, v)}
	}
	leaf := r.ComputeLeafHash()
	if leaf != r.LeafHash {
		return &VerifyError{Position: want, Reason: "record does not match its leaf_hash (a field was changed)"}
	}
	chain := NextChainHash(w.chain, leaf)
	if chain != r.ChainHash {
		return &VerifyError{Position: want, Reason: "chain_hash does not follow from the previous event"}
	}
	if err := w.tree.Append(leaf[:], w.nodes.visit); err != nil {
		return err
	}
	w.pos, w.chain, w.streams[r.StreamID] = want, chain, r.StreamVersion
	return w.checkpointsAt(want)
}

// checkpointsAt compares the roots of the checkpoints of size pos with the tree so far.
func (w *walker) checkpointsAt(pos int64) error {
	for w.nextCP < len(w.cps) && w.cps[w.nextCP].Size <= pos {
		cp := w.cps[w.nextCP]
		if cp.Size == pos || cp.Size == 0 {
			if got := rootOf(w.tree); cp.Size == pos && got != cp.RootHash {
				return &VerifyError{Position: pos, Reason: fmt.Sprintf("checkpoint of size %d: root %s, tree gives %s", cp.Size, cp.RootHash, got)}
			}
		}
		w.nextCP++
	}
	return nil
}

func (w *walker) finish(head Head) (*VerifyReport, error) {
	if w.nextCP < len(w.cps) {
		cp := w.cps[w.nextCP]
		return nil, &VerifyError{Position: w.pos + 1, Reason: fmt.Sprintf("checkpoint of size %d is beyond the last event %d", cp.Size, w.pos)}
	}
	if w.pos != head.Size {
		return nil, &VerifyError{Position: w.pos + 1, Reason: fmt.Sprintf("ledger_head says %d events, found %d", head.Size, w.pos)}
	}
	if w.chain != head.ChainHash {
		return nil, &VerifyError{Position: w.pos, Reason: "ledger_head chain_hash differs from the last event's"}
	}
	root := rootOf(w.tree)
	if root != head.RootHash {
		return nil, &VerifyError{Position: w.pos, Reason: "ledger_head merkle state differs from the tree of the events"}
	}
	return &VerifyReport{Events: w.pos, ChainHash: w.chain, RootHash: root, Checkpoints: len(w.cps)}, nil
}
