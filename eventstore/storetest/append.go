package storetest

import (
	"math"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/mailledger/mailledger/eventstore"
)

// recordView is a record's stored fields in a form that compares with ==.
type recordView struct {
	Position, StreamVersion                    int64
	StreamID, StreamType, TenantID, EventType  string
	SchemaVersion                              int
	Payload, Metadata, RecordedAt, Leaf, Chain string
}

func view(r eventstore.Record) recordView {
	return recordView{
		Position: r.Position, StreamVersion: r.StreamVersion, StreamID: r.StreamID, StreamType: r.StreamType,
		TenantID: r.TenantID, EventType: r.EventType, SchemaVersion: r.SchemaVersion,
		Payload: string(r.Payload), Metadata: string(r.Metadata), RecordedAt: r.RecordedAt.Format(time.RFC3339Nano),
		Leaf: r.LeafHash.String(), Chain: r.ChainHash.String(),
	}
}

func views(recs []eventstore.Record) []recordView {
	var out []recordView
	for _, r := range recs {
		out = append(out, view(r))
	}
	return out
}

// testAppendAndLoad appends to two streams in turn and checks positions, versions, the
// recorded time, the hash chain and that Load and ReadAll give back what Append returned.
func testAppendAndLoad(t *testing.T, newDB Factory) {
	clock := time.Date(2026, 3, 1, 10, 30, 0, 123456789, time.FixedZone("CET", 3600))
	f := newFixture(t, newDB, eventstore.Options{Clock: func() time.Time { return clock }})
	a, b := stream("erasure-1"), stream("export-1")
	b.Type, b.TenantID = "export_job", "tenant-b"
	steps := []struct {
		stream        eventstore.Stream
		expected      int64
		n             int
		wantPositions []int64
		wantVersions  []int64
	}{
		{a, eventstore.NoStream, 3, []int64{1, 2, 3}, []int64{1, 2, 3}},
		{b, eventstore.NoStream, 1, []int64{4}, []int64{1}},
		{a, 3, 2, []int64{5, 6}, []int64{4, 5}},
		{b, 1, 1, []int64{7}, []int64{2}},
	}
	var all []eventstore.Record
	byStream := map[string][]eventstore.Record{}
	for _, st := range steps {
		recs := f.append(st.stream, st.expected, numbered(len(all)+1, st.n)...)
		var versions []int64
		for _, r := range recs {
			versions = append(versions, r.StreamVersion)
			assert.Equal(t, st.stream, eventstore.Stream{ID: r.StreamID, Type: r.StreamType, TenantID: r.TenantID})
		}
		assert.Equal(t, st.wantPositions, positions(recs), "positions of %s at expected %d", st.stream.ID, st.expected)
		assert.Equal(t, st.wantVersions, versions, "versions of %s at expected %d", st.stream.ID, st.expected)
		all = append(all, recs...)
		byStream[st.stream.ID] = append(byStream[st.stream.ID], recs...)
	}
	checkRecordedAt(t, all, clock)
	checkChain(t, all)
	for id, want := range byStream {
		got, err := f.store.Load(f.ctx, id)
		require.NoError(t, err)
		assert.Equal(t, views(want), views(got), "Load(%s)", id)
	}
	assert.Equal(t, views(all), views(f.readAll()), "ReadAll")
	unknown, err := f.store.Load(f.ctx, "no-such-stream")
	require.NoError(t, err)
	assert.Empty(t, unknown, "Load of an unknown stream")
	h := f.head()
	assert.Equal(t, int64(7), h.Size, "head size")
	assert.Equal(t, all[6].ChainHash, h.ChainHash, "head chain hash; want the last event's")
	rep := f.verify()
	assert.Equal(t, int64(7), rep.Events)
	assert.Equal(t, h.RootHash, rep.RootHash)
}

// checkRecordedAt checks that every record carries the clock's time in UTC, truncated to
// microseconds.
func checkRecordedAt(t *testing.T, recs []eventstore.Record, clock time.Time) {
	t.Helper()
	want := clock.UTC().Truncate(time.Microsecond)
	for _, r := range recs {
		assert.True(t, r.RecordedAt.Equal(want), "position %d recorded_at: got %s; want %s", r.Position, r.RecordedAt, want)
		assert.Equal(t, time.UTC, r.RecordedAt.Location(), "position %d recorded_at location", r.Position)
	}
}

// checkChain recomputes leaf and chain hashes from the records' fields, independently of
// the store's helpers: leaf = SHA-256(0x00 ‖ canonical record), chain = SHA-256(prev ‖ leaf).
func checkChain(t *testing.T, recs []eventstore.Record) {
	t.Helper()
	var prev eventstore.Hash
	for _, r := range recs {
		leaf := rfc6962.DefaultHasher.HashLeaf(r.CanonicalBytes())
		assert.Equal(t, leaf, r.LeafHash[:], "position %d leaf hash", r.Position)
		assert.Equal(t, eventstore.NextChainHash(prev, r.LeafHash), r.ChainHash, "position %d chain hash", r.Position)
		prev = r.ChainHash
	}
}

// testCanonicalPayload checks that payloads and metadata are stored as RFC 8785 bytes,
// exactly the bytes that were hashed.
func testCanonicalPayload(t *testing.T, newDB Factory) {
	f := newFixture(t, newDB, eventstore.Options{})
	cases := []struct {
		name    string
		payload any
		want    string
	}{
		{"keys sorted, HTML and U+2028 unescaped", map[string]any{"z": 1, "a": "<é\u2028&>", "m": []any{3, "x", nil}},
			`{"a":"<é` + "\u2028" + `&>","m":[3,"x",null],"z":1}`},
		{"numbers in ECMAScript form", map[string]any{"big": 1e21, "neg_zero": math.Copysign(0, -1), "f": 100.0, "frac": 0.5},
			`{"big":1e+21,"f":100,"frac":0.5,"neg_zero":0}`},
		{"struct fields by name, nested", struct {
			Zeta  string         `json:"zeta"`
			Alpha map[string]int `json:"alpha"`
		}{"\u0001\"\\", map[string]int{"b": 2, "a": 1}},
			`{"alpha":{"a":1,"b":2},"zeta":"\u0001\"\\"}`},
		{"empty object", struct{}{}, `{}`},
		{"raw JSON canonicalised", []byte(`{"b" : 1,  "a":"\u0041"}`), `{"a":"A","b":1}`},
	}
	const wantMeta = `{"actor":"dpo@acme.example","client_ip":"192.0.2.7","correlation_id":"corr-1","user_agent":"storetest"}`
	for _, tc := range cases {
		payload := tc.payload
		if raw, ok := payload.([]byte); ok {
			payload = rawJSON(raw)
		}
		rec := f.append(stream(tc.name), eventstore.NoStream, event("test.canonical", payload))[0]
		assert.Equal(t, tc.want, string(rec.Payload), "%s: appended payload", tc.name)
		stored := f.storedColumns(rec.Position)
		assert.Equal(t, tc.want, stored.payload, "%s: payload column", tc.name)
		assert.Equal(t, wantMeta, stored.metadata, "%s: metadata column", tc.name)
		again, err := jcs.Transform([]byte(stored.payload))
		require.NoError(t, err)
		assert.Equal(t, stored.payload, string(again), "%s: stored payload is not canonical", tc.name)
		loaded, err := f.store.ReadPositions(f.ctx, []int64{rec.Position})
		require.NoError(t, err)
		require.Len(t, loaded, 1)
		leaf := rfc6962.DefaultHasher.HashLeaf(loaded[0].CanonicalBytes())
		assert.Equal(t, eventstore.Hash(leaf).String(), stored.leaf, "%s: leaf_hash column; want the hash of the stored record", tc.name)
	}
	f.verify()
}

// rawJSON is a payload that marshals to its own bytes.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

type storedRow struct{ payload, metadata, leaf string }

// storedColumns reads the payload, metadata and leaf_hash columns with plain SQL.
func (f *fixture) storedColumns(position int64) storedRow {
	f.t.Helper()
	var r storedRow
	q := f.db.Rebind(`SELECT payload, metadata, leaf_hash FROM events WHERE position = ?`)
	require.NoError(f.t, f.db.QueryRowContext(f.ctx, q, position).Scan(&r.payload, &r.metadata, &r.leaf))
	return r
}

// testReadAllPaging reads seven events in pages of every size.
func testReadAllPaging(t *testing.T, newDB Factory) {
	f := newFixture(t, newDB, eventstore.Options{})
	f.append(stream("a"), eventstore.NoStream, numbered(1, 4)...)
	f.append(stream("b"), eventstore.NoStream, numbered(5, 3)...)
	cases := []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 3, []int64{1, 2, 3}},
		{3, 3, []int64{4, 5, 6}},
		{6, 3, []int64{7}},
		{7, 3, nil},
		{100, 3, nil},
		{0, 1, []int64{1}},
		{2, 100, span(3, 7)},
		{0, 0, span(1, 7)}, // a limit of 0 means the default page
	}
	for _, tc := range cases {
		got, err := f.store.ReadAll(f.ctx, tc.after, tc.limit)
		require.NoError(t, err)
		assert.Equal(t, tc.want, positions(got), "ReadAll(after %d, limit %d)", tc.after, tc.limit)
		raw, err := f.store.ReadRaw(f.ctx, tc.after, max(tc.limit, 1000))
		require.NoError(t, err)
		assert.Equal(t, span(tc.after+1, 7), positions(raw), "ReadRaw(after %d)", tc.after)
	}
	got, err := f.store.ReadPositions(f.ctx, []int64{6, 2, 9, 4})
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 4, 6}, positions(got), "ReadPositions(6, 2, 9, 4)")
}
