package storetest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/mailledger/mailledger/eventstore"
)

var hasher = rfc6962.DefaultHasher

// testProofs grows ledgers of 37 and 1000 events, signing checkpoints on the way, and
// checks every proof with transparency-dev/merkle's verifier against the signed roots.
func testProofs(t *testing.T, newDB Factory) {
	for _, tc := range []struct {
		size  int64
		signs []int64
	}{
		{37, []int64{1, 2, 3, 16, 17, 37}},
		{1000, []int64{1, 256, 257, 511, 1000}},
	} {
		t.Run(fmt.Sprintf("%d leaves", tc.size), func(t *testing.T) {
			f := newFixture(t, newDB, eventstore.Options{})
			roots := map[int64][]byte{}
			for _, size := range tc.signs {
				f.grow(size)
				cp, err := eventstore.OpenCheckpoint(f.sign().Note, f.key.PublicKey)
				require.NoError(t, err, "open checkpoint of size %d", size)
				require.Equal(t, size, cp.Size)
				roots[size] = cp.RootHash[:]
			}
			leaves := f.leaves()
			require.Len(t, leaves, int(tc.size))
			for size, root := range roots {
				assert.Equal(t, referenceRoot(leaves[:size]), root, "signed root of size %d; want RFC 6962 MTH of the leaves", size)
			}
			f.checkInclusion(leaves, roots, tc.size)
			f.checkConsistency(leaves, roots, tc.signs)
		})
	}
}

// leaves returns the leaf hashes of the whole log, checking each against its record.
func (f *fixture) leaves() [][]byte {
	f.t.Helper()
	var out [][]byte
	for _, r := range f.readAll() {
		leaf := hasher.HashLeaf(r.CanonicalBytes())
		require.Equal(f.t, leaf, r.LeafHash[:], "position %d: stored leaf hash", r.Position)
		out = append(out, leaf)
	}
	return out
}

// referenceRoot is RFC 6962's MTH over leaf hashes, computed by its recursive definition.
func referenceRoot(leaves [][]byte) []byte {
	switch len(leaves) {
	case 0:
		return hasher.EmptyRoot()
	case 1:
		return leaves[0]
	}
	k := 1
	for k<<1 < len(leaves) {
		k <<= 1
	}
	return hasher.HashChildren(referenceRoot(leaves[:k]), referenceRoot(leaves[k:]))
}

// checkInclusion proves every position against the final root and a sample of positions
// against each earlier root; a proof must not verify another leaf or an edited path.
func (f *fixture) checkInclusion(leaves [][]byte, roots map[int64][]byte, final int64) {
	f.t.Helper()
	for size, root := range roots {
		for p := int64(1); p <= size; p++ {
			if size != final && size > 40 && p%37 != 1 && p != size {
				continue
			}
			pr, err := f.store.InclusionProof(f.ctx, p, size)
			require.NoError(f.t, err, "inclusion proof of %d in %d", p, size)
			idx := uint64(p - 1)
			require.NoError(f.t, proof.VerifyInclusion(hasher, idx, uint64(size), leaves[p-1], pr, root), "inclusion of position %d in tree of size %d", p, size)
			f.checkInclusionRejects(p, size, leaves, pr, root)
		}
	}
}

func (f *fixture) checkInclusionRejects(p, size int64, leaves [][]byte, pr [][]byte, root []byte) {
	f.t.Helper()
	idx, n := uint64(p-1), uint64(size)
	wrongLeaf := hasher.HashLeaf([]byte("not an event"))
	assert.Error(f.t, proof.VerifyInclusion(hasher, idx, n, wrongLeaf, pr, root), "a wrong leaf hash verified at position %d of %d", p, size)
	if size > 1 {
		other := leaves[p%size]
		assert.Error(f.t, proof.VerifyInclusion(hasher, idx, n, other, pr, root), "position %d's proof verified position %d's leaf", p, p%size+1)
	}
	if len(pr) > 0 {
		edited := cloneProof(pr)
		edited[len(edited)-1][0] ^= 1
		assert.Error(f.t, proof.VerifyInclusion(hasher, idx, n, leaves[p-1], edited, root), "an edited proof verified position %d of %d", p, size)
	}
}

// checkConsistency proves every pair of signed sizes and every prefix of the final tree
// (up to 40 of them) consistent with the final tree.
func (f *fixture) checkConsistency(leaves [][]byte, roots map[int64][]byte, signed []int64) {
	f.t.Helper()
	final := signed[len(signed)-1]
	type pair struct{ from, to int64 }
	var pairs []pair
	for i, from := range signed {
		for _, to := range signed[i:] {
			pairs = append(pairs, pair{from, to})
		}
	}
	for from := int64(0); from <= final; from += max(1, final/40) {
		pairs = append(pairs, pair{from, final})
	}
	for _, pc := range pairs {
		root1, root2 := referenceRoot(leaves[:pc.from]), roots[pc.to]
		pr, err := f.store.ConsistencyProof(f.ctx, pc.from, pc.to)
		require.NoError(f.t, err, "consistency proof %d → %d", pc.from, pc.to)
		err = proof.VerifyConsistency(hasher, uint64(pc.from), uint64(pc.to), pr, root1, root2)
		require.NoError(f.t, err, "consistency of %d with %d", pc.from, pc.to)
		if pc.from > 0 && pc.from < pc.to {
			wrong := hasher.HashChildren(root1, root1)
			assert.Error(f.t, proof.VerifyConsistency(hasher, uint64(pc.from), uint64(pc.to), pr, wrong, root2),
				"consistency %d → %d verified a wrong old root", pc.from, pc.to)
		}
	}
}

func cloneProof(pr [][]byte) [][]byte {
	out := make([][]byte, len(pr))
	for i, h := range pr {
		out[i] = bytes.Clone(h)
	}
	return out
}

// testProofArguments checks that proofs and roots outside the tree are ErrNotFound.
func testProofArguments(t *testing.T, newDB Factory) {
	f := newFixture(t, newDB, eventstore.Options{})
	root0, err := f.store.RootAt(f.ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, hasher.EmptyRoot(), root0[:], "root of the empty tree")
	f.grow(10)
	for _, pc := range [][2]int64{{0, 10}, {11, 11}, {5, 4}, {1, 11}, {-1, 10}} {
		_, err := f.store.InclusionProof(f.ctx, pc[0], pc[1])
		assert.ErrorIs(t, err, eventstore.ErrNotFound, "InclusionProof(%d, %d): got %v", pc[0], pc[1], err)
	}
	for _, pc := range [][2]int64{{5, 4}, {-1, 3}, {3, 11}} {
		_, err := f.store.ConsistencyProof(f.ctx, pc[0], pc[1])
		assert.ErrorIs(t, err, eventstore.ErrNotFound, "ConsistencyProof(%d, %d): got %v", pc[0], pc[1], err)
	}
	for _, size := range []int64{-1, 11} {
		_, err := f.store.RootAt(f.ctx, size)
		assert.ErrorIs(t, err, eventstore.ErrNotFound, "RootAt(%d): got %v", size, err)
	}
	root10, err := f.store.RootAt(f.ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, referenceRoot(f.leaves()), root10[:], "RootAt(10)")
	assert.Equal(t, root10, f.head().RootHash, "RootAt(10); want the head's root")
}
