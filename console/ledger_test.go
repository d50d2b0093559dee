package console_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
)

// TestLedgerPage: the page shows the signed checkpoint of the head and the public key
// with its fingerprint (as certificates print it); a verification started with the button
// runs to OK with its progress at the head; after an event is changed with plain SQL, the
// next one fails naming its position. A plain user sees the checkpoint and key but no
// verification.
func TestLedgerPage(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		f.makeObjects(tenant, "subject@example.test")
		auditor := f.login(auditorUser)
		_, page := auditor.get("/ledger")
		cp, err := f.app.Ledger.Checkpoint(context.Background())
		require.NoError(t, err)
		require.Positive(t, cp.Size)
		assert.Contains(t, page, `<dd id="cp-size">`+itoa(cp.Size)+` events</dd>`)
		assert.Contains(t, page, cp.RootHash.String())
		assert.Contains(t, page, strings.ReplaceAll(f.app.Ledger.PublicKey(), "+", "&#43;"), "the key, as html/template escapes it")
		assert.Contains(t, page, f.app.Ledger.KeyFingerprint())
		assert.Regexp(t, regexp.MustCompile(`id="fingerprint">[0-9a-f]{64}<`), page)
		assert.Contains(t, page, "No verification has run")
		assert.Contains(t, page, "Verify the ledger now")
		assert.NotContains(t, page, `http-equiv="refresh"`)

		auditor.requireSubmit("/ledger/verify", nil, http.StatusSeeOther)
		require.NoError(t, f.app.Verification.Wait(context.Background()))
		_, last := f.app.Verification.Status()
		require.NotNil(t, last)
		assert.True(t, last.OK, "got %q; want OK", last.Error)
		assert.Equal(t, last.Total, last.Done, "progress reached the head")
		assert.GreaterOrEqual(t, last.Done, cp.Size)
		_, page = auditor.get("/ledger")
		assert.Contains(t, page, "<strong>OK</strong>")
		assert.Contains(t, page, "Started by "+auditorUser)

		f.tamper(2)
		admin := f.login(adminUser)
		admin.requireSubmit("/ledger/verify", nil, http.StatusSeeOther)
		require.NoError(t, f.app.Verification.Wait(context.Background()))
		_, page = admin.get("/ledger")
		assert.Contains(t, page, "<strong>Failed</strong>")
		assert.Contains(t, page, "ledger broken at position 2")
		assert.Contains(t, page, "Started by "+adminUser)

		user := f.login(plainUser)
		resp, page := user.get("/ledger")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, f.app.Ledger.KeyFingerprint())
		assert.NotContains(t, page, "Verify the ledger now")
		assert.NotContains(t, page, "Failed")
	})
}

// tamper changes the metadata of the event at position with plain SQL, as
// eventstore/storetest's tampering cases do.
func (f *fixture) tamper(position int64) {
	f.t.Helper()
	db := f.env.DB
	_, err := db.ExecContext(context.Background(), db.Rebind(`UPDATE events SET metadata = ? WHERE position = ?`), `{"actor":"mallory"}`, position)
	require.NoError(f.t, err)
}

// gatedVerifier reports some progress, then waits to be released.
type gatedVerifier struct {
	progressed, release chan struct{}
}

func (g *gatedVerifier) Verify(_ context.Context, _ string, progress func(done, total int64)) (*eventstore.VerifyReport, error) {
	progress(20000, 50000)
	close(g.progressed)
	<-g.release
	progress(50000, 50000)
	return &eventstore.VerifyReport{Events: 50000}, nil
}

// TestLedgerVerificationRunning: while a verification runs, the page shows its progress
// and refreshes itself (a meta refresh: the console allows no script), and a second
// click starts nothing but shows the running one.
func TestLedgerVerificationRunning(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	g := &gatedVerifier{progressed: make(chan struct{}), release: make(chan struct{})}
	v, err := app.NewLedgerVerification(g, f.app.Ledger.PublicKey(), nil)
	require.NoError(t, err)
	f.app.Verification = v
	admin := f.login(adminUser)
	admin.requireSubmit("/ledger/verify", nil, http.StatusSeeOther)
	<-g.progressed
	auditor := f.login(auditorUser)
	auditor.requireSubmit("/ledger/verify", nil, http.StatusSeeOther)
	_, page := auditor.get("/ledger")
	assert.Contains(t, page, `<meta http-equiv="refresh" content="2">`)
	assert.Contains(t, page, `<strong id="verify-progress">20000 of 50000</strong>`)
	assert.Contains(t, page, "started by "+adminUser, "the second click shows the running verification")
	assert.NotContains(t, page, "Verify the ledger now")
	close(g.release)
	require.NoError(t, v.Wait(context.Background()))
	_, page = auditor.get("/ledger")
	assert.NotContains(t, page, `http-equiv="refresh"`)
	assert.Contains(t, page, "<strong>OK</strong>: 50000 events checked.")
	assert.Contains(t, page, "Started by "+adminUser)
}
