package handlers_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
)

type inclusionJSON struct {
	Position   int64    `json:"position"`
	LeafIndex  int64    `json:"leaf_index"`
	TreeSize   int64    `json:"tree_size"`
	LeafHash   string   `json:"leaf_hash"`
	Hashes     []string `json:"hashes"`
	RootHash   string   `json:"root_hash"`
	Checkpoint *string  `json:"checkpoint"`
}

type consistencyJSON struct {
	From           int64    `json:"from"`
	To             int64    `json:"to"`
	Hashes         []string `json:"hashes"`
	FromRoot       string   `json:"from_root"`
	ToRoot         string   `json:"to_root"`
	FromCheckpoint *string  `json:"from_checkpoint"`
	ToCheckpoint   *string  `json:"to_checkpoint"`
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err, "hex %q", s)
	return b
}

func mustHexAll(t *testing.T, ss []string) [][]byte {
	t.Helper()
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = mustHex(t, s)
	}
	return out
}

// publicKey fetches the verifier key from the API.
func (f *fixture) publicKey() string {
	f.t.Helper()
	resp, body := f.get("/api/v1/ledger/public-key")
	require.Equal(f.t, http.StatusOK, resp.StatusCode)
	assert.Equal(f.t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	return strings.TrimSpace(string(body))
}

func TestCheckpointIsSignedOnDemand(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		vkey := f.publicKey()
		f.appendEvents(5)
		for round, want := range []int64{5, 5, 8} {
			if round == 2 {
				f.appendEvents(3)
			}
			resp, body := f.get("/api/v1/ledger/checkpoint")
			require.Equal(t, http.StatusOK, resp.StatusCode, "body %s", body)
			assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
			cp, err := eventstore.OpenCheckpoint(body, vkey)
			require.NoError(t, err)
			head, err := f.store.Head(context.Background())
			require.NoError(t, err)
			assert.Equal(t, want, cp.Size, "round %d", round)
			assert.Equal(t, head.RootHash, cp.RootHash, "round %d", round)
			assert.Equal(t, "mailledger-test", cp.Origin)
		}
		cps, err := f.store.Checkpoints(context.Background())
		require.NoError(t, err)
		assert.Len(t, cps, 2, "a checkpoint of an unchanged head is not signed twice")
	})
}

func TestInclusionProofVerifies(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		vkey := f.publicKey()
		f.appendEvents(7)
		f.sign()
		f.appendEvents(6)
		cases := []struct {
			query          string
			position, size int64
			checkpoint     bool
		}{
			{"position=1", 1, 7, true},            // default size: the newest checkpoint
			{"position=7", 7, 7, true},            // its last leaf
			{"position=10", 10, 13, true},         // beyond it: the head is signed on demand
			{"position=3&size=9", 3, 9, false},    // a size with no checkpoint
			{"position=13&size=13", 13, 13, true}, // the head, signed by the previous case
			{"position=9&size=9", 9, 9, false},
		}
		for _, tc := range cases {
			resp, body := f.get("/api/v1/ledger/proof?" + tc.query)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s: body %s", tc.query, body)
			var p inclusionJSON
			require.NoError(t, json.Unmarshal(body, &p))
			assert.Equal(t, tc.position, p.Position, tc.query)
			assert.Equal(t, tc.position-1, p.LeafIndex, tc.query)
			assert.Equal(t, tc.size, p.TreeSize, tc.query)
			f.checkInclusion(p, vkey, tc.checkpoint)
		}
	})
}

// checkInclusion verifies p with the merkle library against the root the store computes
// and, when present, against the signed checkpoint.
func (f *fixture) checkInclusion(p inclusionJSON, vkey string, wantCheckpoint bool) {
	t := f.t
	t.Helper()
	ctx := context.Background()
	recs, err := f.store.ReadPositions(ctx, []int64{p.Position})
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, recs[0].LeafHash.String(), p.LeafHash, "leaf hash of position %d", p.Position)
	root, err := f.store.RootAt(ctx, p.TreeSize)
	require.NoError(t, err)
	assert.Equal(t, root.String(), p.RootHash)
	err = proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(p.LeafIndex), uint64(p.TreeSize),
		mustHex(t, p.LeafHash), mustHexAll(t, p.Hashes), mustHex(t, p.RootHash))
	require.NoError(t, err, "position %d size %d", p.Position, p.TreeSize)
	if !wantCheckpoint {
		assert.Nil(t, p.Checkpoint, "no checkpoint of size %d", p.TreeSize)
		return
	}
	require.NotNil(t, p.Checkpoint, "checkpoint of size %d", p.TreeSize)
	cp, err := eventstore.OpenCheckpoint([]byte(*p.Checkpoint), vkey)
	require.NoError(t, err)
	assert.Equal(t, p.TreeSize, cp.Size)
	assert.Equal(t, p.RootHash, cp.RootHash.String())
}

func TestConsistencyProofVerifies(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		f.appendEvents(5)
		f.sign()
		f.appendEvents(8)
		f.sign()
		cases := []struct {
			from, to             int64
			fromCP, toCP, hashes bool
		}{
			{5, 13, true, true, true},
			{1, 13, false, true, true},
			{3, 7, false, false, true},
			{5, 5, true, true, false},
			{0, 13, false, true, false},
		}
		for _, tc := range cases {
			resp, body := f.get(fmt.Sprintf("/api/v1/ledger/consistency?from=%d&to=%d", tc.from, tc.to))
			require.Equal(t, http.StatusOK, resp.StatusCode, "body %s", body)
			require.Contains(t, string(body), `"hashes":[`, "an empty list is [], never null")
			var p consistencyJSON
			require.NoError(t, json.Unmarshal(body, &p))
			assert.Equal(t, tc.from, p.From)
			assert.Equal(t, tc.to, p.To)
			assert.Equal(t, tc.hashes, len(p.Hashes) > 0, "%d..%d hashes", tc.from, tc.to)
			assert.Equal(t, tc.fromCP, p.FromCheckpoint != nil, "%d..%d from_checkpoint", tc.from, tc.to)
			assert.Equal(t, tc.toCP, p.ToCheckpoint != nil, "%d..%d to_checkpoint", tc.from, tc.to)
			f.checkConsistency(p)
		}
	})
}

func (f *fixture) checkConsistency(p consistencyJSON) {
	t := f.t
	t.Helper()
	for size, got := range map[int64]string{p.From: p.FromRoot, p.To: p.ToRoot} {
		root, err := f.store.RootAt(context.Background(), size)
		require.NoError(t, err)
		assert.Equal(t, root.String(), got, "root of size %d", size)
	}
	err := proof.VerifyConsistency(rfc6962.DefaultHasher, uint64(p.From), uint64(p.To),
		mustHexAll(t, p.Hashes), mustHex(t, p.FromRoot), mustHex(t, p.ToRoot))
	require.NoError(t, err, "consistency %d..%d", p.From, p.To)
}

func TestLedgerQueryErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	f.appendEvents(4)
	cases := []struct {
		query  string
		status int
		code   string
		field  string
	}{
		{"/proof", 400, "validation_failed", "position"},
		{"/proof?position=", 400, "validation_failed", "position"},
		{"/proof?position=abc", 400, "validation_failed", "position"},
		{"/proof?position=0", 400, "validation_failed", "position"},
		{"/proof?position=1.5", 400, "validation_failed", "position"},
		{"/proof?position=1&position=2", 400, "validation_failed", "position"},
		{"/proof?position=1&size=0", 400, "validation_failed", "size"},
		{"/proof?position=1&size=x", 400, "validation_failed", "size"},
		{"/proof?position=3&size=2", 400, "validation_failed", "position"},
		{"/proof?position=5", 404, "not_found", ""},
		{"/proof?position=1&size=5", 404, "not_found", ""},
		{"/proof?position=99999999999999999999", 400, "validation_failed", "position"},
		{"/consistency", 400, "validation_failed", "from"},
		{"/consistency?from=1", 400, "validation_failed", "to"},
		{"/consistency?from=-1&to=2", 400, "validation_failed", "from"},
		{"/consistency?from=3&to=2", 400, "validation_failed", "from"},
		{"/consistency?from=1&to=5", 404, "not_found", ""},
	}
	for _, tc := range cases {
		resp, body := f.get("/api/v1/ledger" + tc.query)
		require.Equal(t, tc.status, resp.StatusCode, "%s: body %s", tc.query, body)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), tc.query)
		e := decodeError(t, body)
		assert.Equal(t, tc.code, e.Error.Code, tc.query)
		if tc.field == "" {
			assert.Nil(t, e.Error.Details, "%s: details are null when unset", tc.query)
			continue
		}
		fields, ok := e.Error.Details["fields"].(map[string]any)
		require.True(t, ok, "%s: details.fields in %s", tc.query, body)
		assert.Contains(t, fields, tc.field, tc.query)
	}
}

func TestConsistencyProofNeedsBothSizes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	_, body := f.get("/api/v1/ledger/consistency")
	e := decodeError(t, body)
	fields := e.Error.Details["fields"].(map[string]any)
	assert.Equal(t, map[string]any{"from": "is required", "to": "is required"}, fields)
}
