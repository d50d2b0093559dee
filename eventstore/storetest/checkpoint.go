package storetest

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"

	"github.com/mailledger/mailledger/eventstore"
)

// testCheckpoints signs tree heads as the ledger grows and opens them with the right key;
// forged or edited notes must not open.
func testCheckpoints(t *testing.T, newDB Factory) {
	f := newFixture(t, newDB, eventstore.Options{})
	empty := f.sign()
	assert.Equal(t, int64(0), empty.Size, "checkpoint of the empty ledger")
	assert.Equal(t, hasher.EmptyRoot(), empty.RootHash[:], "root of the empty ledger")
	f.verify()

	f.grow(5)
	cp5 := f.sign()
	opened, err := eventstore.OpenCheckpoint(cp5.Note, f.key.PublicKey)
	require.NoError(t, err)
	assert.Equal(t, keyName, opened.Origin)
	assert.Equal(t, int64(5), opened.Size)
	assert.Equal(t, f.head().RootHash, opened.RootHash, "signed root; want the head's")
	again := f.sign()
	assert.Equal(t, int64(5), again.Size, "Sign with no new event; want the newest checkpoint")
	assert.Equal(t, int64(2), f.count("checkpoints"), "checkpoints after signing an unchanged head twice")

	f.grow(8)
	cp8 := f.sign()
	f.checkCheckpointQueries([]int64{0, 5, 8})
	assert.Equal(t, 3, f.verify().Checkpoints)
	f.checkOpenRejects(cp8)
}

func (f *fixture) checkCheckpointQueries(wantSizes []int64) {
	t := f.t
	t.Helper()
	latest, err := f.store.LatestCheckpoint(f.ctx)
	require.NoError(t, err)
	assert.Equal(t, wantSizes[len(wantSizes)-1], latest.Size, "LatestCheckpoint size")
	all, err := f.store.Checkpoints(f.ctx)
	require.NoError(t, err)
	var sizes []int64
	for _, cp := range all {
		sizes = append(sizes, cp.Size)
		assert.Equal(t, keyName, cp.Origin, "origin of checkpoint %d", cp.Size)
	}
	assert.Equal(t, wantSizes, sizes, "Checkpoints")
	at5, err := f.store.CheckpointAt(f.ctx, 5)
	require.NoError(t, err)
	assert.Equal(t, int64(5), at5.Size, "CheckpointAt(5)")
	covering, err := f.store.CheckpointCovering(f.ctx, 6)
	require.NoError(t, err)
	assert.Equal(t, int64(8), covering.Size, "CheckpointCovering(6)")
	_, err = f.store.CheckpointAt(f.ctx, 6)
	assert.ErrorIs(t, err, eventstore.ErrNotFound, "CheckpointAt(6)")
	_, err = f.store.CheckpointCovering(f.ctx, 9)
	assert.ErrorIs(t, err, eventstore.ErrNotFound, "CheckpointCovering(9)")
}

// checkOpenRejects opens altered copies of cp, which must all fail with ErrBadCheckpoint.
func (f *fixture) checkOpenRejects(cp *eventstore.Checkpoint) {
	t := f.t
	t.Helper()
	other := otherKey(t)
	forged, err := note.Sign(&note.Note{Text: eventstore.CheckpointBody(keyName, cp.Size, cp.RootHash)}, other.Signer)
	require.NoError(t, err)
	sizeEdited := bytes.Replace(cp.Note, []byte("\n8\n"), []byte("\n9\n"), 1)
	require.NotEqual(t, cp.Note, sizeEdited)
	originEdited := bytes.Replace(cp.Note, []byte(keyName), []byte("evil.example/ledger"), 1)
	cases := []struct {
		name string
		msg  []byte
		vkey string
	}{
		{"signed by another key of the same name", forged, f.key.PublicKey},
		{"size line edited", sizeEdited, f.key.PublicKey},
		{"origin line edited", originEdited, f.key.PublicKey},
		{"signature line removed", cp.Note[:bytes.Index(cp.Note, []byte("\n\n"))+2], f.key.PublicKey},
		{"opened with another key", cp.Note, other.PublicKey},
		{"opened with a malformed key", cp.Note, "not a key"},
	}
	for _, tc := range cases {
		_, err := eventstore.OpenCheckpoint(tc.msg, tc.vkey)
		assert.ErrorIs(t, err, eventstore.ErrBadCheckpoint, "%s: got %v", tc.name, err)
	}
	_, err = eventstore.OpenCheckpoint(forged, other.PublicKey)
	assert.NoError(t, err, "the forged note opens with its own key (the case above fails for the right reason)")
}
