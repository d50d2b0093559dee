package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/certificate/render"
	"github.com/mailledger/mailledger/certificate/render/pdftest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/internal/testenv"
)

// certFixture is a completed erasure request and the certificate use cases.
type certFixture struct {
	*erasureFixture
	certs  *app.Certificates
	signer *eventstore.Signer
	req    *app.RequestView
}

func newCertFixture(t *testing.T, d database.Dialect, cfg ...app.CertificatesConfig) *certFixture {
	t.Helper()
	f := &certFixture{erasureFixture: newErasureFixture(t, d)}
	f.signer, _ = testenv.Signer(t, f.store, "mailledger")
	var c app.CertificatesConfig
	if len(cfg) > 0 {
		c = cfg[0]
	}
	var err error
	f.certs, err = app.NewCertificates(f.store, f.signer, c)
	require.NoError(t, err)
	f.archiveMail("acme", generated(16))
	f.req = f.create("acme", "alice@alpha.test", "bob@alpha.test")
	f.drain()
	return f
}

// complete approves and executes the request, and returns it completed.
func (f *certFixture) complete() *app.RequestView {
	f.t.Helper()
	_, err := f.er.Approve(f.ctx, "acme", f.req.RequestID, actor("approver"))
	require.NoError(f.t, err)
	_, err = f.er.Execute(f.ctx, "acme", f.req.RequestID, actor("approver"))
	require.NoError(f.t, err)
	f.drain()
	f.req = f.get("acme", f.req.RequestID)
	require.Equal(f.t, erasure.StatusCompleted, f.req.Status)
	require.Positive(f.t, f.req.DeletedCount)
	return f.req
}

func (f *certFixture) bundle() *certificate.Bundle {
	f.t.Helper()
	b, err := f.certs.Bundle(f.ctx, "acme", f.req.RequestID)
	require.NoError(f.t, err)
	return b
}

// TestCertificateNotAvailableUntilCompleted checks the errors before completion and
// across tenants.
func TestCertificateNotAvailableUntilCompleted(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newCertFixture(t, d, app.CertificatesConfig{PDFServiceURL: "http://127.0.0.1:1"})
		id := f.req.RequestID
		_, err := f.certs.HTML(f.ctx, "acme", id)
		assert.ErrorIs(t, err, app.ErrCertificateNotAvailable, "html of a pending_approval request")
		_, err = f.certs.Bundle(f.ctx, "acme", id)
		assert.ErrorIs(t, err, app.ErrCertificateNotAvailable, "bundle")
		_, err = f.certs.PDF(f.ctx, "acme", id)
		assert.ErrorIs(t, err, app.ErrCertificateNotAvailable, "pdf: 409 before the PDF service is asked")
		f.complete()
		for tenant, want := range map[string]error{"globex": app.ErrNotFound, "acme": nil, app.AllTenants: nil} {
			_, err = f.certs.HTML(f.ctx, tenant, id)
			assert.ErrorIs(t, err, want, "html for tenant %s", tenant)
			_, err = f.certs.Bundle(f.ctx, tenant, id)
			assert.ErrorIs(t, err, want, "bundle for tenant %s", tenant)
		}
		_, err = f.certs.HTML(f.ctx, "acme", "GDPR-2026-99999")
		assert.ErrorIs(t, err, app.ErrNotFound)
		_, err = f.certs.PDF(f.ctx, "acme", id)
		assert.ErrorIs(t, err, render.ErrPDFUnavailable, "the PDF service is down")
	})
}

// TestCertificateHTMLAndPDF checks that the HTML certificate of a completed request shows
// every required field, and that its PDF, made by the chromium stand-in of Gotenberg,
// contains the certificate hash.
func TestCertificateHTMLAndPDF(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		srv := pdftest.Start(t)
		f := newCertFixture(t, d, app.CertificatesConfig{PDFServiceURL: srv.URL})
		v := f.complete()
		page, err := f.certs.HTML(f.ctx, "acme", v.RequestID)
		require.NoError(t, err)
		html := string(page)
		day := func(ts string) string { return strings.Replace(strings.TrimSuffix(ts, "Z"), "T", " ", 1)[:19] + " UTC" }
		body, err := f.certs.Body(f.ctx, "acme", v.RequestID)
		require.NoError(t, err)
		for name, want := range map[string]string{
			"request id":       v.RequestID,
			"first address":    "alice@alpha.test",
			"second address":   "bob@alpha.test",
			"request date":     v.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"),
			"completion date":  v.ExecutedAt.UTC().Format("2006-01-02 15:04:05 UTC"),
			"deleted count":    fmt.Sprintf("<td>%d</td>", v.DeletedCount),
			"approver":         "approver, " + v.ApprovedAt.UTC().Format("2006-01-02 15:04:05 UTC"),
			"certificate hash": *v.CertificateHash,
			"ledger position":  fmt.Sprintf("<td>%d</td>", v.CompletionPosition),
			"key fingerprint":  render.KeyFingerprint(f.signer.Key().PublicKey),
			"verify command":   "mailledger verify-certificate",
			"verify recipe":    "docs/verification.md",
			"body dates":       day(body.CompletedAt),
		} {
			assert.Contains(t, html, want, name)
		}
		pdf, err := f.certs.PDF(f.ctx, "acme", v.RequestID)
		require.NoError(t, err)
		assert.Contains(t, pdftest.Text(t, pdf), *v.CertificateHash, "hash in the PDF's text")
	})
}

// TestCertificateBundle checks that the bundle of a completed request verifies offline,
// with the hash that the request shows, against a checkpoint signed on demand, and that
// the same request gives the same bundle.
func TestCertificateBundle(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newCertFixture(t, d)
		v := f.complete()
		_, err := f.store.LatestCheckpoint(f.ctx)
		require.ErrorIs(t, err, eventstore.ErrNotFound, "no checkpoint before the bundle")
		b := f.bundle()
		data, err := b.JSON()
		require.NoError(t, err)
		res, err := certificate.VerifyBundle(data, f.signer.Key().PublicKey)
		require.NoError(t, err)
		assert.Equal(t, *v.CertificateHash, res.CertificateHash)
		assert.Equal(t, v.DeletedCount, res.Body.DeletedCount)
		assert.Equal(t, v.RequestID, res.Body.RequestID)
		assert.Equal(t, v.CompletionPosition, res.Body.CompletionPosition)
		recs, err := f.store.Load(f.ctx, erasure.StreamID(v.RequestID))
		require.NoError(t, err)
		assert.Equal(t, len(recs), res.Events, "every event of the stream")
		assert.GreaterOrEqual(t, res.Checkpoint.Size, v.CompletionPosition)

		f.create("acme", "carol@beta.test")
		_, err = f.signer.Sign(f.ctx)
		require.NoError(t, err)
		again, err := f.bundle().JSON()
		require.NoError(t, err)
		assert.Equal(t, string(data), string(again), "the smallest covering checkpoint is used again")
	})
}

// TestCertificateBundleTampering changes the bundle in every part and checks that each
// change is rejected with a reason that names the part, then flips every byte of the
// bundle's JSON and checks that none goes unnoticed.
func TestCertificateBundleTampering(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newCertFixture(t, d)
		f.complete()
		good := f.bundle()
		key := f.signer.Key().PublicKey
		for name, c := range tamperings(t, good) {
			t.Run(name, func(t *testing.T) {
				b := cloneBundle(t, good)
				c.change(b)
				data, err := b.JSON()
				require.NoError(t, err)
				_, err = certificate.VerifyBundle(data, key)
				require.ErrorIs(t, err, certificate.ErrInvalidBundle)
				assert.Contains(t, err.Error(), c.reason)
			})
		}
		other, err := eventstore.LoadOrCreateKey(t.TempDir(), "mailledger")
		require.NoError(t, err)
		data, err := good.JSON()
		require.NoError(t, err)
		_, err = certificate.VerifyBundle(data, other.PublicKey)
		require.ErrorIs(t, err, certificate.ErrInvalidBundle, "another ledger's key")
		assert.Contains(t, err.Error(), "checkpoint: does not verify with the public key")
		assertEveryByteMatters(t, data, key)
	})
}

func assertEveryByteMatters(t *testing.T, data []byte, key string) {
	_, err := certificate.VerifyBundle(data, key)
	require.NoError(t, err)
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x01
		if _, err := certificate.VerifyBundle(bad, key); err == nil {
			t.Errorf("byte %d changed from %q to %q and the bundle still verifies: …%s…", i, data[i], bad[i], around(data, i))
		}
	}
}

func around(data []byte, i int) string {
	return string(data[max(0, i-30):min(len(data), i+30)])
}

func cloneBundle(t *testing.T, b *certificate.Bundle) *certificate.Bundle {
	t.Helper()
	data, err := json.Marshal(b)
	require.NoError(t, err)
	var out certificate.Bundle
	require.NoError(t, json.Unmarshal(data, &out))
	return &out
}
