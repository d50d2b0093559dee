package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
)

// tamperLedgerSize is the size of the ledger that the tampering cases edit; a checkpoint
// is signed at tamperCheckpoint and at the end.
const (
	tamperLedgerSize = 12
	tamperCheckpoint = 6
)

// anyPosition marks a tampering case where Verify must fail but need not name a position.
const anyPosition = -1

// testVerifyDetectsTampering edits a verified ledger with plain SQL, one way per case,
// and checks that Verify fails, naming the first position the edit broke.
func testVerifyDetectsTampering(t *testing.T, newDB Factory) {
	cases := []struct {
		name         string
		tamper       func(f *fixture)
		wantPosition int64
	}{
		{"changed payload byte", func(f *fixture) { f.changePayloadByte(4) }, 4},
		{"changed metadata", func(f *fixture) { f.exec(`UPDATE events SET metadata = ? WHERE position = 2`, `{"actor":"mallory"}`) }, 2},
		{"deleted row", func(f *fixture) { f.exec(`DELETE FROM events WHERE position = 5`) }, 5},
		{"deleted last row", func(f *fixture) { f.exec(`DELETE FROM events WHERE position = 12`) }, 12},
		{"swapped rows", func(f *fixture) { f.swapRows(3, 8) }, 3},
		{"changed recorded_at", func(f *fixture) { f.shiftRecordedAt(7, time.Second) }, 7},
		{"recorded_at moved by a microsecond", func(f *fixture) { f.shiftRecordedAt(9, time.Microsecond) }, 9},
		{"changed event type", func(f *fixture) { f.exec(`UPDATE events SET event_type = 'test.other' WHERE position = 10`) }, 10},
		{"changed stream version", func(f *fixture) { f.exec(`UPDATE events SET stream_version = 99 WHERE position = 11`) }, 11},
		{"changed leaf hash", func(f *fixture) { f.exec(`UPDATE events SET leaf_hash = ? WHERE position = 8`, fakeHash("leaf")) }, 8},
		{"changed chain hash", func(f *fixture) { f.exec(`UPDATE events SET chain_hash = ? WHERE position = 6`, fakeHash("chain")) }, 6},
		{"ledger head chain hash", func(f *fixture) { f.exec(`UPDATE ledger_head SET chain_hash = ?`, fakeHash("head")) }, 12},
		{"ledger head merkle state", func(f *fixture) { f.replaceMerkleState() }, 12},
		{"ledger head size", func(f *fixture) { f.exec(`UPDATE ledger_head SET size = 11`) }, 0}, // position 0: ledger_head itself
		{"checkpoint signed by another key", func(f *fixture) { f.forgeCheckpoint(otherSigner(f.t)) }, tamperCheckpoint},
		{"checkpoint note text altered", func(f *fixture) { f.alterCheckpointText() }, tamperCheckpoint},
		{"checkpoint root_hash column changed", func(f *fixture) {
			f.exec(`UPDATE checkpoints SET root_hash = ? WHERE size = ?`, fakeHash("root"), tamperCheckpoint)
		}, tamperCheckpoint},
		{"checkpoint of a wrong root, validly signed", func(f *fixture) { f.signWrongRoot() }, tamperCheckpoint},
		{"checkpoint beyond the log", func(f *fixture) { f.signBeyondLog() }, tamperLedgerSize + 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newTamperFixture(t, newDB)
			tc.tamper(f)
			_, err := f.store.Verify(f.ctx, f.key.PublicKey, nil)
			require.Error(t, err, "Verify passed a tampered ledger")
			if tc.wantPosition == anyPosition {
				return
			}
			var ve *eventstore.VerifyError
			require.True(t, errors.As(err, &ve), "got error %v; want a *VerifyError", err)
			assert.Equal(t, tc.wantPosition, ve.Position, "got position %d (%s); want %d", ve.Position, ve.Reason, tc.wantPosition)
		})
	}
	t.Run("verified with another key", func(t *testing.T) {
		f := newTamperFixture(t, newDB)
		_, err := f.store.Verify(f.ctx, otherKey(t).PublicKey, nil)
		var ve *eventstore.VerifyError
		require.True(t, errors.As(err, &ve), "got error %v; want a *VerifyError", err)
		assert.Equal(t, int64(tamperCheckpoint), ve.Position, "got position %d; want the first checkpoint's size", ve.Position)
	})
}

// newTamperFixture builds a verified ledger of three interleaved streams with checkpoints.
func newTamperFixture(t *testing.T, newDB Factory) *fixture {
	t.Helper()
	f := newFixture(t, newDB, eventstore.Options{})
	f.append(stream("a"), eventstore.NoStream, numbered(1, 2)...)
	f.append(stream("b"), eventstore.NoStream, numbered(3, 1)...)
	f.append(stream("c"), eventstore.NoStream, numbered(4, 3)...)
	f.sign()
	f.append(stream("a"), 2, numbered(7, 3)...)
	f.append(stream("b"), 1, numbered(10, 3)...)
	f.sign()
	rep := f.verify()
	require.Equal(t, int64(tamperLedgerSize), rep.Events)
	require.Equal(t, 2, rep.Checkpoints)
	return f
}

func fakeHash(seed string) string {
	h := sha256.Sum256([]byte(seed))
	return eventstore.Hash(h).String()
}

func (f *fixture) record(position int64) eventstore.Record {
	f.t.Helper()
	recs, err := f.store.ReadPositions(f.ctx, []int64{position})
	require.NoError(f.t, err)
	require.Len(f.t, recs, 1, "event at position %d", position)
	return recs[0]
}

// changePayloadByte changes one byte of the payload: "abc" becomes "abd".
func (f *fixture) changePayloadByte(position int64) {
	r := f.record(position)
	changed := bytes.Replace(r.Payload, []byte(`"abc"`), []byte(`"abd"`), 1)
	require.NotEqual(f.t, r.Payload, changed)
	f.exec(`UPDATE events SET payload = ? WHERE position = ?`, string(changed), position)
}

func (f *fixture) shiftRecordedAt(position int64, d time.Duration) {
	r := f.record(position)
	f.exec(`UPDATE events SET recorded_at = ? WHERE position = ?`, database.TimeArg(f.db.Dialect, r.RecordedAt.Add(d)), position)
}

// swapRows exchanges every column but position between two rows, through a temporary
// stream id so that (stream_id, stream_version) stays unique.
func (f *fixture) swapRows(p, q int64) {
	rp, rq := f.record(p), f.record(q)
	f.exec(`UPDATE events SET stream_id = 'swap-tmp' WHERE position = ?`, p)
	f.writeRow(q, rp)
	f.writeRow(p, rq)
}

func (f *fixture) writeRow(position int64, r eventstore.Record) {
	f.exec(`UPDATE events SET stream_id = ?, stream_type = ?, stream_version = ?, tenant_id = ?, event_type = ?, schema_version = ?, payload = ?, metadata = ?, recorded_at = ?, leaf_hash = ?, chain_hash = ? WHERE position = ?`,
		r.StreamID, r.StreamType, r.StreamVersion, r.TenantID, r.EventType, r.SchemaVersion, string(r.Payload),
		string(r.Metadata), database.TimeArg(f.db.Dialect, r.RecordedAt), r.LeafHash.String(), r.ChainHash.String(), position)
}

// replaceMerkleState swaps the first hash of the head's compact range for another.
func (f *fixture) replaceMerkleState() {
	var state string
	require.NoError(f.t, f.db.QueryRowContext(f.ctx, `SELECT merkle_state FROM ledger_head`).Scan(&state))
	require.GreaterOrEqual(f.t, len(state), 64)
	f.exec(`UPDATE ledger_head SET merkle_state = ?`, fakeHash("state")+state[64:])
}

func otherKey(t *testing.T) *eventstore.Key {
	t.Helper()
	k, err := eventstore.LoadOrCreateKey(t.TempDir(), keyName) // the same name, another key
	require.NoError(t, err)
	return k
}

func otherSigner(t *testing.T) note.Signer { return otherKey(t).Signer }

// forgeCheckpoint replaces the first checkpoint's note by the same body signed with s.
func (f *fixture) forgeCheckpoint(s note.Signer) {
	cp := f.checkpointAt(tamperCheckpoint)
	f.storeNote(tamperCheckpoint, eventstore.CheckpointBody(keyName, cp.Size, cp.RootHash), s)
}

// alterCheckpointText edits the root line of the first checkpoint's signed note.
func (f *fixture) alterCheckpointText() {
	cp := f.checkpointAt(tamperCheckpoint)
	root := base64.StdEncoding.EncodeToString(cp.RootHash[:])
	other := sha256.Sum256(cp.RootHash[:])
	changed := bytes.Replace(cp.Note, []byte(root), []byte(base64.StdEncoding.EncodeToString(other[:])), 1)
	require.NotEqual(f.t, cp.Note, changed)
	f.exec(`UPDATE checkpoints SET note = ? WHERE size = ?`, string(changed), tamperCheckpoint)
}

// signWrongRoot stores a checkpoint, signed with the right key, whose root is not the tree's.
func (f *fixture) signWrongRoot() {
	wrong := eventstore.Hash(sha256.Sum256([]byte("wrong root")))
	f.storeNote(tamperCheckpoint, eventstore.CheckpointBody(keyName, tamperCheckpoint, wrong), f.key.Signer)
	f.exec(`UPDATE checkpoints SET root_hash = ? WHERE size = ?`, wrong.String(), tamperCheckpoint)
}

// signBeyondLog adds a validly signed checkpoint for a size the log never reached.
func (f *fixture) signBeyondLog() {
	const size = tamperLedgerSize + 5
	root := eventstore.Hash(sha256.Sum256([]byte("future")))
	msg, err := note.Sign(&note.Note{Text: eventstore.CheckpointBody(keyName, size, root)}, f.key.Signer)
	require.NoError(f.t, err)
	f.exec(`INSERT INTO checkpoints (size, root_hash, note, created_at) VALUES (?, ?, ?, ?)`,
		size, root.String(), string(msg), database.TimeArg(f.db.Dialect, time.Now()))
}

func (f *fixture) storeNote(size int64, body string, s note.Signer) {
	msg, err := note.Sign(&note.Note{Text: body}, s)
	require.NoError(f.t, err)
	f.exec(`UPDATE checkpoints SET note = ? WHERE size = ?`, string(msg), size)
}

func (f *fixture) checkpointAt(size int64) *eventstore.Checkpoint {
	f.t.Helper()
	cp, err := f.store.CheckpointAt(f.ctx, size)
	require.NoError(f.t, err)
	return cp
}
