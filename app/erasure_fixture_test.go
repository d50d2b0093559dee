package app_test

import (
	"context"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/internal/testenv"
)

// erasureFixture is the erasure workflow over a fresh database, archive and ledger.
type erasureFixture struct {
	t       *testing.T
	ctx     context.Context
	db      *database.DB
	store   *eventstore.Store
	arc     *archive.Archive
	er      *app.Erasure
	holds   *app.LegalHolds
	dataDir string
	drained int64 // the ledger position up to which drain delivered events
}

var erasurePool = []string{
	"alice@alpha.test", "bob@alpha.test", "carol@beta.test", "dave@beta.test",
	"erin@gamma.test", "frank@gamma.test",
}

func newErasureFixture(t *testing.T, d database.Dialect, cfg ...app.ErasureConfig) *erasureFixture {
	t.Helper()
	var c app.ErasureConfig
	if len(cfg) > 0 {
		c = cfg[0]
	}
	return openErasureFixture(t, dbtest.Open(t, d), t.TempDir(), c)
}

// openErasureFixture wires the workflow over db, with files and keys under dataDir.
func openErasureFixture(t *testing.T, db *database.DB, dataDir string, cfg app.ErasureConfig) *erasureFixture {
	t.Helper()
	f := &erasureFixture{t: t, ctx: t.Context(), db: db, dataDir: dataDir}
	env := testenv.Open(t, db, dataDir)
	f.store, f.arc = env.Store, env.Archive
	var err error
	f.er, err = app.NewErasure(f.store, f.arc, cfg)
	require.NoError(t, err)
	f.holds, err = app.NewLegalHolds(f.store)
	require.NoError(t, err)
	return f
}

func actor(name string) domain.Metadata {
	return domain.Metadata{Actor: name, ClientIP: "192.0.2.7", UserAgent: "test"}
}

// archiveMail stores generated mail in tenant and returns the ids, in order.
func (f *erasureFixture) archiveMail(tenant string, mails []archivetest.Mail) []int64 {
	f.t.Helper()
	var batch []*archive.Prepared
	for _, m := range mails {
		p, err := f.arc.Prepare(archive.Incoming{Tenant: tenant, Raw: m.Raw, Envelope: m.Envelope, Source: "generated"})
		require.NoError(f.t, err)
		batch = append(batch, p)
	}
	res, err := f.arc.Commit(f.ctx, batch)
	require.NoError(f.t, err)
	ids := make([]int64, len(res))
	for i, r := range res {
		require.False(f.t, r.Duplicate)
		ids[i] = r.ID
	}
	return ids
}

// drain delivers every event appended since the last drain to the assessor and the
// executor, in order, as app.Background would, until the ledger is quiet.
func (f *erasureFixture) drain() {
	f.t.Helper()
	for {
		recs, err := f.store.ReadAll(f.ctx, f.drained, 100)
		require.NoError(f.t, err)
		if len(recs) == 0 {
			return
		}
		for _, rec := range recs {
			require.NoError(f.t, f.er.HandleAssessment(f.ctx, rec), "assessor at position %d", rec.Position)
			require.NoError(f.t, f.er.HandleExecution(f.ctx, rec), "executor at position %d", rec.Position)
			f.drained = rec.Position
		}
	}
}

func (f *erasureFixture) create(tenant string, addrs ...string) *app.RequestView {
	f.t.Helper()
	v, err := f.er.Create(f.ctx, tenant, app.CreateRequestInput{EmailAddresses: addrs, RequesterName: "Data Subject"}, actor("creator"))
	require.NoError(f.t, err)
	return v
}

// erase creates a request for addrs, lets it be assessed, approves and executes it, and
// returns it completed.
func (f *erasureFixture) erase(tenant string, addrs ...string) *app.RequestView {
	f.t.Helper()
	req := f.create(tenant, addrs...)
	f.drain()
	_, err := f.er.Approve(f.ctx, tenant, req.RequestID, actor("approver"))
	require.NoError(f.t, err)
	_, err = f.er.Execute(f.ctx, tenant, req.RequestID, actor("approver"))
	require.NoError(f.t, err)
	f.drain()
	done := f.get(tenant, req.RequestID)
	require.Equal(f.t, erasure.StatusCompleted, done.Status)
	return done
}

func (f *erasureFixture) get(tenant, id string) *app.RequestView {
	f.t.Helper()
	v, err := f.er.Get(f.ctx, tenant, id)
	require.NoError(f.t, err)
	return v
}

func (f *erasureFixture) placeHold(tenant, typ, value string) string {
	f.t.Helper()
	h, err := f.holds.Place(f.ctx, tenant, app.PlaceHoldInput{Type: typ, Value: value, Reason: "litigation"}, actor("legal"))
	require.NoError(f.t, err)
	return h.ID
}

func (f *erasureFixture) release(tenant, id string) {
	f.t.Helper()
	_, err := f.holds.Release(f.ctx, tenant, id, actor("legal"))
	require.NoError(f.t, err)
}

// erasedBy returns the erasure mark of every message id (empty when not erased).
func (f *erasureFixture) erasedBy(ids []int64) map[int64]string {
	f.t.Helper()
	out := map[int64]string{}
	rows, err := f.db.Query(`SELECT id, erased_by FROM metadata`)
	require.NoError(f.t, err)
	defer rows.Close()
	for rows.Next() {
		var id int64
		var by *string
		require.NoError(f.t, rows.Scan(&id, &by))
		if slices.Contains(ids, id) {
			out[id] = ""
			if by != nil {
				out[id] = *by
			}
		}
	}
	require.NoError(f.t, rows.Err())
	return out
}

// holdSpec is a hold as the tests model it.
type holdSpec struct{ typ, value string }

// covers reports whether the hold covers m: an address hold on a participant, or a
// domain hold on a participant's domain.
func (h holdSpec) covers(m archivetest.Mail) bool {
	for _, p := range m.Participants() {
		if h.typ == "address" && p == h.value || h.typ == "domain" && strings.HasSuffix(p, "@"+h.value) {
			return true
		}
	}
	return false
}

// involves reports whether m names one of addrs as sender or recipient.
func involves(m archivetest.Mail, addrs []string) bool {
	for _, a := range addrs {
		if m.Sends(a) || m.Receives(a) {
			return true
		}
	}
	return false
}

var mailStart = time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)

func (f *erasureFixture) ctxWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(f.ctx)
}

// generated returns n messages among erasurePool, the same for the same n.
func generated(n int) []archivetest.Mail {
	return archivetest.GenerateMail(rand.New(rand.NewSource(int64(n))), n, erasurePool, mailStart)
}
