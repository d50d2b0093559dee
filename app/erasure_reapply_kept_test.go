package app_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
)

// TestReapplyFromKeptCertificates: the whole database, ledger included, comes back from a
// backup made after the mail arrived and before its erasure. The database then knows
// nothing of the erasure; the certificate bundle that the keeper wrote outside it proves
// the erasure, and Reapply erases the same messages again from it. A bundle altered on
// disk is refused and erases nothing.
func TestReapplyFromKeptCertificates(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		dataDir := t.TempDir()
		key, err := eventstore.LoadOrCreateKey(filepath.Join(dataDir, "ledger-key"), "reapply-test")
		require.NoError(t, err)
		kept := app.KeptCertificates{Dir: filepath.Join(dataDir, "certificates"), PublicKey: key.PublicKey}
		mail := generated(30)

		// Before: the mail is archived, then erased, and the keeper keeps the bundle.
		f := openErasureFixture(t, dbtest.Open(t, d), dataDir, app.ErasureConfig{Kept: kept})
		ids := f.archiveMail("acme", mail)
		signer, err := eventstore.NewSigner(f.store, key, "reapply-test")
		require.NoError(t, err)
		certs, err := app.NewCertificates(f.store, signer, app.CertificatesConfig{})
		require.NoError(t, err)
		keeper, err := app.NewCertificateKeeper(certs, kept.Dir, nil)
		require.NoError(t, err)
		req := f.erase("acme", "carol@beta.test")
		erased := f.erasedIDs(ids, req.RequestID)
		require.NotEmpty(t, erased)
		keepAll(t, f, keeper)
		bundlePath := filepath.Join(kept.Dir, req.RequestID+".json")
		info, err := os.Stat(bundlePath)
		require.NoError(t, err, "the keeper wrote the bundle")
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
		original, err := os.ReadFile(bundlePath)
		require.NoError(t, err)
		keepAll(t, f, keeper) // again: delivered twice, kept once, unchanged
		again, err := os.ReadFile(bundlePath)
		require.NoError(t, err)
		assert.Equal(t, original, again)

		// The database restored: a fresh one with the same mail, nothing of the erasure.
		r := openErasureFixture(t, dbtest.Open(t, d), dataDir, app.ErasureConfig{Kept: kept})
		require.Equal(t, ids, r.archiveMail("acme", mail), "the same messages under the same ids")
		assert.Empty(t, r.erasedIDs(ids, req.RequestID))

		// A bundle altered on disk (its data subject's address) is refused.
		forged := bytes.ReplaceAll(original, []byte("carol@beta.test"), []byte("carla@beta.test"))
		require.NotEqual(t, original, forged)
		require.NoError(t, os.WriteFile(bundlePath, forged, 0o600))
		rep, err := r.er.Reapply(r.ctx, "operator")
		require.NoError(t, err)
		assert.Empty(t, rep.Requests, "nothing applied from a bundle that does not verify")
		require.Len(t, rep.Refused, 1)
		assert.Equal(t, req.RequestID+".json", rep.Refused[0].File)
		assert.Empty(t, r.erasedIDs(ids, req.RequestID))

		// A file far larger than any bundle is refused unread.
		require.NoError(t, os.WriteFile(bundlePath, bytes.Repeat([]byte(" "), 16<<20+1), 0o600))
		rep, err = r.er.Reapply(r.ctx, "operator")
		require.NoError(t, err)
		require.Len(t, rep.Refused, 1)
		assert.Contains(t, rep.Refused[0].Reason, "too large for a certificate bundle")
		assert.Empty(t, rep.Requests)

		// The genuine bundle: the archive looks older, and Reapply erases the same messages.
		require.NoError(t, os.WriteFile(bundlePath, original, 0o600))
		older, err := r.er.ArchiveLooksOlder(r.ctx)
		require.NoError(t, err)
		assert.True(t, older, "a kept certificate the database does not know")
		rep, err = r.er.Reapply(r.ctx, "operator")
		require.NoError(t, err)
		assert.Empty(t, rep.Refused)
		assert.Equal(t, []app.ReappliedRequest{{RequestID: req.RequestID, TenantID: "acme", Erased: len(erased), FromCertificate: true}}, rep.Requests)
		assert.ElementsMatch(t, erased, r.erasedIDs(ids, req.RequestID))
		older, err = r.er.ArchiveLooksOlder(r.ctx)
		require.NoError(t, err)
		assert.False(t, older)
		rep, err = r.er.Reapply(r.ctx, "operator")
		require.NoError(t, err)
		assert.Empty(t, rep.Requests, "a second run finds nothing")

		assert.Equal(t, 4, r.countEvents(app.EventErasuresReapplied), "each run is in the restored ledger")
		_, err = r.store.Verify(r.ctx, key.PublicKey, nil)
		assert.NoError(t, err, "the restored ledger verifies")
	})
}

// keepAll hands every event of f's ledger to the keeper, as the background consumer would.
func keepAll(t *testing.T, f *erasureFixture, k *app.CertificateKeeper) {
	t.Helper()
	recs, err := f.store.ReadAll(f.ctx, 0, 10000)
	require.NoError(t, err)
	for _, rec := range recs {
		require.NoError(t, k.HandleEvent(f.ctx, rec))
	}
}
