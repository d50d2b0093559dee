package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
)

// renamedUpcasters upgrades "test.renamed": v1 {"name"} → v2 {"full_name"} → v3 adds "locale".
func renamedUpcasters() *eventstore.Upcasters {
	up := eventstore.NewUpcasters()
	up.Register("test.renamed", 1, func(p json.RawMessage) (json.RawMessage, error) {
		var v1 struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(p, &v1); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]string{"full_name": v1.Name})
	})
	up.Register("test.renamed", 2, func(p json.RawMessage) (json.RawMessage, error) {
		var v2 map[string]string
		if err := json.Unmarshal(p, &v2); err != nil {
			return nil, err
		}
		v2["locale"] = "und"
		return json.Marshal(v2)
	})
	return up
}

// seenEvent is what a projector was handed.
type seenEvent struct {
	Position    int64
	DataVersion int
	Data        string
}

// capturingProjector records every event it projects; it owns no table.
type capturingProjector struct{ seen []seenEvent }

func (*capturingProjector) Name() string     { return "capture" }
func (*capturingProjector) Tables() []string { return nil }
func (c *capturingProjector) Project(_ context.Context, _ *database.Tx, r *eventstore.Record) error {
	c.seen = append(c.seen, seenEvent{r.Position, r.DataVersion, string(r.Data)})
	return nil
}

// testUpcasters stores events of several schema versions and checks that reads upcast
// Data step by step while Payload stays the stored, hashed bytes.
func testUpcasters(t *testing.T, newDB Factory) {
	capture := &capturingProjector{}
	f := newFixture(t, newDB, eventstore.Options{Upcasters: renamedUpcasters(), Projectors: []eventstore.Projector{capture}})
	s := stream("person-1")
	f.append(s, eventstore.NoStream,
		event("test.renamed", map[string]string{"name": "Ada"}),
		eventstore.NewEvent{Type: "test.renamed", SchemaVersion: 2, Payload: map[string]string{"full_name": "Bob"}},
		eventstore.NewEvent{Type: "test.renamed", SchemaVersion: 3, Payload: map[string]string{"full_name": "Cy", "locale": "fr"}},
		event("test.other", map[string]string{"name": "Dee"}))
	want := []struct {
		payload, data string
		version       int
	}{
		{`{"name":"Ada"}`, `{"full_name":"Ada","locale":"und"}`, 3},
		{`{"full_name":"Bob"}`, `{"full_name":"Bob","locale":"und"}`, 3},
		{`{"full_name":"Cy","locale":"fr"}`, `{"full_name":"Cy","locale":"fr"}`, 3},
		{`{"name":"Dee"}`, `{"name":"Dee"}`, 1},
	}
	loaded, err := f.store.Load(f.ctx, s.ID)
	require.NoError(t, err)
	require.Len(t, loaded, len(want))
	all := f.readAll()
	raw, err := f.store.ReadRaw(f.ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, capture.seen, len(want), "events projected")
	for i, w := range want {
		pos := int64(i + 1)
		for name, r := range map[string]eventstore.Record{"Load": loaded[i], "ReadAll": all[i]} {
			assert.Equal(t, w.payload, string(r.Payload), "%s position %d: Payload; want the stored bytes", name, pos)
			assert.JSONEq(t, w.data, string(r.Data), "%s position %d: Data", name, pos)
			assert.Equal(t, w.version, r.DataVersion, "%s position %d: DataVersion", name, pos)
		}
		assert.Equal(t, string(raw[i].Payload), string(raw[i].Data), "ReadRaw position %d: Data; want the stored payload", pos)
		assert.Equal(t, raw[i].SchemaVersion, raw[i].DataVersion, "ReadRaw position %d: DataVersion", pos)
		assert.Equal(t, w.payload, f.storedColumns(pos).payload, "position %d: payload column", pos)
		assert.Equal(t, w.version, capture.seen[i].DataVersion, "projector at position %d: DataVersion", pos)
		assert.JSONEq(t, w.data, capture.seen[i].Data, "projector at position %d: Data", pos)
	}
	assert.Equal(t, []int{1, 2, 3, 1}, schemaVersions(loaded), "SchemaVersion; want the stored versions")
	f.checkStreamTx(s.ID, []string{want[0].payload, want[1].payload, want[2].payload})
	f.verify()
	f.checkFailingUpcaster()
}

func schemaVersions(recs []eventstore.Record) []int {
	var out []int
	for _, r := range recs {
		out = append(out, r.SchemaVersion)
	}
	return out
}

// checkStreamTx reads the first versions of the stream inside a transaction with
// StreamTx, as a projector does: the records up to the version asked, as stored, with
// Data the stored payload (not upcast).
func (f *fixture) checkStreamTx(streamID string, stored []string) {
	t := f.t
	t.Helper()
	through := int64(len(stored))
	err := f.db.InTx(f.ctx, func(tx *database.Tx) error {
		recs, err := eventstore.StreamTx(f.ctx, tx, streamID, through)
		if err != nil {
			return err
		}
		require.Len(t, recs, len(stored), "StreamTx through version %d", through)
		for i, r := range recs {
			assert.Equal(t, int64(i+1), r.StreamVersion, "StreamTx record %d: stream version", i+1)
			assert.Equal(t, stored[i], string(r.Payload), "StreamTx version %d: Payload; want the stored bytes", i+1)
			assert.Equal(t, string(r.Payload), string(r.Data), "StreamTx version %d: Data; want the stored payload", i+1)
		}
		return nil
	})
	require.NoError(t, err)
}

// checkFailingUpcaster reads through a store whose upcaster fails: the read must fail
// rather than hand out the old shape.
func (f *fixture) checkFailingUpcaster() {
	t := f.t
	t.Helper()
	broken := eventstore.NewUpcasters()
	errBroken := errors.New("cannot upcast")
	broken.Register("test.other", 1, func(json.RawMessage) (json.RawMessage, error) { return nil, errBroken })
	store, err := eventstore.New(f.db, eventstore.Options{Upcasters: broken})
	require.NoError(t, err)
	_, err = store.Load(f.ctx, "person-1")
	assert.ErrorIs(t, err, errBroken, "Load through a failing upcaster")
	_, err = store.ReadAll(f.ctx, 0, 10)
	assert.ErrorIs(t, err, errBroken, "ReadAll through a failing upcaster")
	raw, err := store.ReadRaw(f.ctx, 0, 10)
	require.NoError(t, err, "ReadRaw does not upcast")
	assert.Len(t, raw, 4)
}
