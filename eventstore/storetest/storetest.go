// Package storetest is the conformance suite of the event store: one contract that the
// ledger passes on every database it supports (SQLite, PostgreSQL, MySQL). A backend's
// test calls Run with a factory that gives each subtest a fresh, migrated database.
package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
)

// Factory returns a fresh, migrated database for one test and closes it in the test's
// cleanup.
type Factory func(t testing.TB) *database.DB

// Run runs the whole contract, one subtest per behaviour, each on its own database.
func Run(t *testing.T, newDB Factory) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Factory)
	}{
		{"AppendAndLoad", testAppendAndLoad},
		{"CanonicalPayload", testCanonicalPayload},
		{"ReadAllPaging", testReadAllPaging},
		{"InvalidInput", testInvalidInput},
		{"ExpectedVersion", testExpectedVersion},
		{"AppendedWakesWaiters", testAppendedWakesWaiters},
		{"ConcurrentWritersDistinctStreams", testConcurrentDistinctStreams},
		{"ConcurrentWritersOneStream", testConcurrentOneStream},
		{"VerifyDetectsTampering", testVerifyDetectsTampering},
		{"VerifyChecksMerkleNodes", testVerifyChecksMerkleNodes},
		{"Checkpoints", testCheckpoints},
		{"InclusionAndConsistencyProofs", testProofs},
		{"ProofArguments", testProofArguments},
		{"Upcasters", testUpcasters},
		{"ProjectionsRebuild", testProjectionsRebuild},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newDB) })
	}
}

// keyName names the test signing key and the checkpoints' origin.
const keyName = "mailledger.test/ledger"

// fixture is one store on one fresh database, with a signing key.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	db     *database.DB
	store  *eventstore.Store
	key    *eventstore.Key
	signer *eventstore.Signer
}

func newFixture(t *testing.T, newDB Factory, opts eventstore.Options) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	db := newDB(t)
	store, err := eventstore.New(db, opts)
	require.NoError(t, err)
	key, err := eventstore.LoadOrCreateKey(t.TempDir(), keyName)
	require.NoError(t, err)
	signer, err := eventstore.NewSigner(store, key, keyName)
	require.NoError(t, err)
	return &fixture{t: t, ctx: ctx, db: db, store: store, key: key, signer: signer}
}

// stream returns a stream reference of the test tenant.
func stream(id string) eventstore.Stream {
	return eventstore.Stream{ID: id, Type: "test_stream", TenantID: "tenant-a"}
}

// testMetadata is the metadata every test event carries.
var testMetadata = domain.Metadata{Actor: "dpo@acme.example", ClientIP: "192.0.2.7", UserAgent: "storetest", CorrelationID: "corr-1"}

// event returns a version-1 event of type typ.
func event(typ string, payload any) eventstore.NewEvent {
	return eventstore.NewEvent{Type: typ, SchemaVersion: 1, Payload: payload, Metadata: testMetadata}
}

// numbered returns n events whose payloads carry seq = from, from+1, ….
func numbered(from, n int) []eventstore.NewEvent {
	out := make([]eventstore.NewEvent, n)
	for i := range out {
		out[i] = event("test.happened", map[string]any{"seq": from + i, "note": "abc"})
	}
	return out
}

func (f *fixture) append(s eventstore.Stream, expected int64, events ...eventstore.NewEvent) []eventstore.Record {
	f.t.Helper()
	recs, err := f.store.Append(f.ctx, s, expected, events...)
	require.NoError(f.t, err, "append to %s at expected version %d", s.ID, expected)
	require.Len(f.t, recs, len(events))
	return recs
}

// grow appends events round-robin over five streams, in batches of 1 to 9 events, until
// the ledger holds size events.
func (f *fixture) grow(size int64) {
	f.t.Helper()
	for batch := 1; ; batch = batch%9 + 1 {
		h := f.head()
		if h.Size >= size {
			return
		}
		n := min(int64(batch), size-h.Size)
		f.append(stream(fmt.Sprintf("grow-%d", h.Size%5)), eventstore.AnyVersion, numbered(int(h.Size)+1, int(n))...)
	}
}

func (f *fixture) head() eventstore.Head {
	f.t.Helper()
	h, err := f.store.Head(f.ctx)
	require.NoError(f.t, err)
	return h
}

func (f *fixture) verify() *eventstore.VerifyReport {
	f.t.Helper()
	rep, err := f.store.Verify(f.ctx, f.key.PublicKey, nil)
	require.NoError(f.t, err, "verify")
	return rep
}

func (f *fixture) sign() *eventstore.Checkpoint {
	f.t.Helper()
	cp, err := f.signer.Sign(f.ctx)
	require.NoError(f.t, err, "sign checkpoint")
	return cp
}

// exec runs a statement written with ?-placeholders directly on the database.
func (f *fixture) exec(q string, args ...any) {
	f.t.Helper()
	_, err := f.db.ExecContext(f.ctx, f.db.Rebind(q), args...)
	require.NoError(f.t, err, q)
}

func (f *fixture) count(table string) int64 {
	f.t.Helper()
	var n int64
	require.NoError(f.t, f.db.QueryRowContext(f.ctx, `SELECT COUNT(*) FROM `+table).Scan(&n))
	return n
}

// readAll reads the whole log through ReadAll, 1000 events per page.
func (f *fixture) readAll() []eventstore.Record {
	f.t.Helper()
	var out []eventstore.Record
	for {
		page, err := f.store.ReadAll(f.ctx, int64(len(out)), 1000)
		require.NoError(f.t, err)
		out = append(out, page...)
		if len(page) < 1000 {
			return out
		}
	}
}

// positions lists the positions of recs.
func positions(recs []eventstore.Record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.Position)
	}
	return out
}

// span returns from, from+1, …, to.
func span(from, to int64) []int64 {
	var out []int64
	for p := from; p <= to; p++ {
		out = append(out, p)
	}
	return out
}
