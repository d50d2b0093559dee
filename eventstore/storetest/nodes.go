package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/transparency-dev/merkle/proof"

	"github.com/mailledger/mailledger/eventstore"
)

// nodesLedgerSize gives stored interior nodes on levels 4 (indexes 0-4), 5 (0-1) and 6 (0).
const nodesLedgerSize = 85

// testVerifyChecksMerkleNodes edits one stored interior node of a verified ledger per
// case and checks that Verify fails naming the node (its level, index and the last
// position it covers). The first case also shows why: the zeroed node makes the served
// inclusion proof unverifiable.
func testVerifyChecksMerkleNodes(t *testing.T, newDB Factory) {
	cases := []struct {
		name         string
		tamper       func(f *fixture)
		level        uint
		index        uint64
		wantPosition int64
	}{
		{"zeroed node", func(f *fixture) { f.setNode(4, 2, zeroHash) }, 4, 2, 48},
		{"changed upper node", func(f *fixture) { f.setNode(5, 1, fakeHash("node")) }, 5, 1, 64},
		{"changed top node", func(f *fixture) { f.setNode(6, 0, fakeHash("top")) }, 6, 0, 64},
		{"unparsable node", func(f *fixture) { f.setNode(4, 0, "not a hash") }, 4, 0, 16},
		{"deleted node", func(f *fixture) { f.exec(`DELETE FROM merkle_nodes WHERE level = 4 AND idx = 1`) }, 4, 1, 32},
		{"node beyond the tree", func(f *fixture) {
			f.exec(`INSERT INTO merkle_nodes (level, idx, hash) VALUES (4, 9, ?)`, fakeHash("extra"))
		}, 4, 9, 160},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, newDB, eventstore.Options{})
			f.grow(nodesLedgerSize)
			f.sign()
			f.verify()
			tc.tamper(f)
			_, err := f.store.Verify(f.ctx, f.key.PublicKey, nil)
			require.Error(t, err, "Verify passed a ledger with a tampered merkle node")
			var ve *eventstore.VerifyError
			require.True(t, errors.As(err, &ve), "got error %v; want a *VerifyError", err)
			require.NotNil(t, ve.Node, "got %v; want the bad node named", ve)
			assert.Equal(t, eventstore.NodeRef{Level: tc.level, Index: tc.index}, *ve.Node, "got %v", ve)
			assert.Equal(t, tc.wantPosition, ve.Position, "got %v", ve)
			assert.Contains(t, ve.Error(), fmt.Sprintf("merkle node level %d index %d", tc.level, tc.index))
		})
	}
	t.Run("the zeroed node breaks proofs", func(t *testing.T) {
		f := newFixture(t, newDB, eventstore.Options{})
		f.grow(nodesLedgerSize)
		leaves, root := f.leaves(), f.head().RootHash
		// Position 49's proof takes level 4 index 2 (positions 33..48) as a sibling.
		pr, err := f.store.InclusionProof(f.ctx, 49, nodesLedgerSize)
		require.NoError(t, err)
		require.NoError(t, proof.VerifyInclusion(hasher, 48, nodesLedgerSize, leaves[48], pr, root[:]))
		f.setNode(4, 2, zeroHash)
		pr, err = f.store.InclusionProof(f.ctx, 49, nodesLedgerSize)
		require.NoError(t, err)
		assert.Error(t, proof.VerifyInclusion(hasher, 48, nodesLedgerSize, leaves[48], pr, root[:]),
			"a proof through the zeroed node verified")
	})
}

const zeroHash = "0000000000000000000000000000000000000000000000000000000000000000"

func (f *fixture) setNode(level, index int, hash string) {
	f.t.Helper()
	require.Equal(f.t, int64(1), f.countWhere(`merkle_nodes WHERE level = ? AND idx = ?`, level, index),
		"merkle node level %d index %d", level, index)
	f.exec(`UPDATE merkle_nodes SET hash = ? WHERE level = ? AND idx = ?`, hash, level, index)
}

func (f *fixture) countWhere(from string, args ...any) int64 {
	f.t.Helper()
	var n int64
	require.NoError(f.t, f.db.QueryRowContext(f.ctx, f.db.Rebind(`SELECT COUNT(*) FROM `+from), args...).Scan(&n))
	return n
}
