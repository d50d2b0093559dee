package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/certificate/render/pdftest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
)

// The data subject of the corpus flow: the sender of 3 corpus messages and a recipient of
// 7 (one of them with a display name that net/mail refuses), 2 of them with attachments.
const corpusSubject = "raasdnil@gmail.com"

// Holds of the corpus flow: each covers a message of the subject through another
// participant; otherHold covers other people's mail only and never blocks.
const (
	witnessHold = `{"type":"address","value":"mikel@test.lindsaar.net","reason":"case 1"}`
	domainHold  = `{"type":"domain","value":"lindsaar.net","reason":"case 2"}`
	otherHold   = `{"type":"address","value":"jamis@37signals.com","reason":"case 3"}`
)

// pdfAvailable reports whether chromium and pdftotext are installed, without skipping.
func pdfAvailable() bool {
	_, err := pdftest.Chromium()
	_, lerr := exec.LookPath("pdftotext")
	return err == nil && lerr == nil
}

// TestErasureFlowOverHTTP runs the whole workflow over HTTP with the corpus imported and
// the real background consumers: counts equal to an independent parse, blocked by an
// address hold and by a domain hold and unblocked by release and re-assessment, the
// creator refused as approver, approved by an administrator, executed, the erased mail
// gone from message view and search, and the certificate in HTML, PDF and bundle form.
func TestErasureFlowOverHTTP(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		var pdfURL string
		if pdfAvailable() {
			pdfURL = pdftest.Start(t).URL
		}
		f := newGDPRFixture(t, d, func(c *app.ApplicationConfig) { c.Certificates.PDFServiceURL = pdfURL })
		files := archivetest.CorpusFiles(t)
		_, err := (&archive.Importer{Archive: f.arc}).Import(context.Background(), app.DefaultTenant, files)
		require.NoError(t, err)
		want := countCorpusScope(t, files, corpusSubject)
		require.Equal(t, []int{3, 7, 2}, []int{want.sender, want.recipient, want.attachments}, "the corpus as this test knows it: %v", want.files)
		f.runBackground()
		f.placeHold(auditorUser, otherHold)

		req := f.create(auditorUser, " RaasDnil@Gmail.com ", corpusSubject)
		assert.Equal(t, []string{corpusSubject}, req.EmailAddresses, "trimmed, lower-cased, de-duplicated")
		req = f.await(req.RequestID, erasure.StatusPendingApproval)
		assert.Equal(t, []int{want.sender, want.recipient, want.attachments},
			[]int{req.EmailsAsSender, req.EmailsAsRecipient, req.AttachmentsCount}, "sender, recipient, attachments")
		affected := f.subjectMessages(corpusSubject)
		require.Len(t, affected, len(want.files), "search finds every affected message")

		f.blockAndRelease(req.RequestID, witnessHold, "mikel@test.lindsaar.net")
		f.blockAndRelease(req.RequestID, domainHold, "lindsaar.net")
		req = f.approveAndExecute(req.RequestID)
		assert.Equal(t, len(want.files), req.DeletedCount)
		f.checkErased(affected)
		f.checkCertificates(req)
		f.checkFlowAudit(req.RequestID)
	})
}

// subjectMessages returns the ids of the messages that addr sent or received, found with
// the message search as the administrator.
func (f *gdprFixture) subjectMessages(addr string) []int64 {
	f.t.Helper()
	var ids []int64
	for _, filter := range []string{"from", "to"} {
		for _, m := range f.list(adminUser, url.Values{filter: {addr}, "limit": {"500"}}).Messages {
			if !slices.Contains(ids, m.ID) {
				ids = append(ids, m.ID)
			}
		}
	}
	return ids
}

// blockAndRelease places hold, re-assesses until blocked by it, releases it and
// re-assesses until pending_approval again.
func (f *gdprFixture) blockAndRelease(id, hold, value string) {
	f.t.Helper()
	holdID := f.placeHold(auditorUser, hold)
	v := f.actOK(auditorUser, id, "assess", "", http.StatusAccepted)
	assert.Contains(f.t, []string{erasure.StatusAssessing, erasure.StatusBlocked}, v.Status)
	v = f.await(id, erasure.StatusBlocked)
	assert.True(f.t, v.BlockedByLegalHold)
	assert.Equal(f.t, []string{holdID}, v.LegalHoldIDs, "only the hold on %s blocks", value)
	require.NotNil(f.t, v.BlockedReason)
	assert.Contains(f.t, *v.BlockedReason, value)
	resp, raw := f.act(adminUser, id, "approve", "")
	require.Equal(f.t, http.StatusConflict, resp.StatusCode, "a blocked request is not approved: %s", raw)

	resp, raw = f.postAs(auditorUser, holdsPath+"/"+holdID+"/release", "")
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "release: %s", raw)
	f.actOK(adminUser, id, "assess", "", http.StatusAccepted)
	v = f.await(id, erasure.StatusPendingApproval)
	assert.False(f.t, v.BlockedByLegalHold)
	assert.Equal(f.t, []string{}, v.LegalHoldIDs)
	assert.Nil(f.t, v.BlockedReason)
}

// approveAndExecute checks that the creator may not approve, approves as the
// administrator and executes until completed.
func (f *gdprFixture) approveAndExecute(id string) requestJSON {
	f.t.Helper()
	resp, raw := f.act(auditorUser, id, "approve", "")
	require.Equal(f.t, http.StatusForbidden, resp.StatusCode, "the creator approves: %s", raw)
	assert.Equal(f.t, "distinct_approver_required", decodeError(f.t, raw).Error.Code)
	v := f.actOK(adminUser, id, "approve", "", http.StatusOK)
	assert.Equal(f.t, erasure.StatusApproved, v.Status)
	require.NotNil(f.t, v.ApprovedBy)
	assert.Equal(f.t, adminUser, *v.ApprovedBy)
	require.NotNil(f.t, v.ApprovedAt)

	resp, raw = f.act(auditorUser, id, "certificate", "")
	require.Equal(f.t, http.StatusMethodNotAllowed, resp.StatusCode, "POST certificate: %s", raw)
	resp, raw = f.getAs(auditorUser, gdprPath+"/"+id+"/certificate")
	require.Equal(f.t, http.StatusConflict, resp.StatusCode, "certificate before completion: %s", raw)
	assert.Equal(f.t, "certificate_not_available", decodeError(f.t, raw).Error.Code)

	v = f.actOK(auditorUser, id, "execute", "", http.StatusAccepted)
	assert.Contains(f.t, []string{erasure.StatusExecuting, erasure.StatusCompleted}, v.Status)
	v = f.await(id, erasure.StatusCompleted)
	assert.True(f.t, v.CertificateAvailable)
	require.NotNil(f.t, v.CertificateHash)
	assert.Regexp(f.t, `^[0-9a-f]{64}$`, *v.CertificateHash)
	require.NotNil(f.t, v.ExecutedAt)
	assert.Zero(f.t, v.RedactedCount)
	return v
}

// checkErased requires the erased messages to be 404 and absent from search.
func (f *gdprFixture) checkErased(ids []int64) {
	f.t.Helper()
	for _, id := range ids {
		for _, view := range []string{"", "/raw", "/text"} {
			resp, raw := f.get(fmt.Sprintf("/api/v1/messages/%d%s", id, view))
			assert.Equal(f.t, http.StatusNotFound, resp.StatusCode, "erased message %d%s: %s", id, view, raw)
		}
	}
	assert.Empty(f.t, f.subjectMessages(corpusSubject), "search finds none of the erased mail")
	assert.Positive(f.t, f.list(adminUser, url.Values{"limit": {"500"}}).Total, "the rest of the corpus stays")
}

// checkCertificates checks the HTML, PDF and bundle of a completed request.
func (f *gdprFixture) checkCertificates(v requestJSON) {
	f.t.Helper()
	base := gdprPath + "/" + v.RequestID + "/certificate"
	resp, page := f.getAs(auditorUser, base)
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "html: %s", page)
	assert.Equal(f.t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(f.t, string(page), *v.CertificateHash)
	assert.Contains(f.t, string(page), corpusSubject)

	resp, bundle := f.getAs(adminUser, base+"/bundle")
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "bundle: %s", bundle)
	assert.Equal(f.t, "application/json", resp.Header.Get("Content-Type"))
	res, err := certificate.VerifyBundle(bundle, f.publicKey())
	require.NoError(f.t, err)
	assert.Equal(f.t, *v.CertificateHash, res.CertificateHash)
	assert.Equal(f.t, v.DeletedCount, res.Body.DeletedCount)
	tampered := strings.Replace(string(bundle), fmt.Sprintf(`\"deleted_count\":%d`, v.DeletedCount), `\"deleted_count\":1`, 1)
	require.NotEqual(f.t, string(bundle), tampered, "the body names the deleted count")
	_, err = certificate.VerifyBundle([]byte(tampered), f.publicKey())
	assert.ErrorIs(f.t, err, certificate.ErrInvalidBundle, "a tampered bundle")

	f.t.Run("pdf", func(t *testing.T) {
		pdftest.Require(t)
		sub := *f.fixture
		sub.t = t
		resp, pdf := sub.getAs(auditorUser, base+"/pdf")
		require.Equal(t, http.StatusOK, resp.StatusCode, "pdf: %.200s", pdf)
		assert.Equal(t, "application/pdf", resp.Header.Get("Content-Type"))
		assert.Contains(t, strings.Join(strings.Fields(pdftest.Text(t, pdf)), ""), *v.CertificateHash)
	})
}

// checkFlowAudit checks the audit trail: every action in order, each with who did it and
// from where, and the user agent in the events' metadata.
func (f *gdprFixture) checkFlowAudit(id string) {
	f.t.Helper()
	records := f.audit(auditorUser, id)
	var actions []string
	for _, a := range records {
		actions = append(actions, a.Action)
		human := !strings.HasPrefix(a.PerformedBy, "system")
		if human {
			require.NotNil(f.t, a.IPAddress, "%s by %s", a.Action, a.PerformedBy)
			assert.Equal(f.t, "127.0.0.1", *a.IPAddress)
		}
		assert.True(f.t, json.Valid(a.Details), "details are JSON: %s", a.Details)
	}
	assert.Equal(f.t, []string{"created", "assessment_started", "assessment_completed",
		"assessment_started", "assessment_blocked", "assessment_started", "assessment_completed",
		"assessment_started", "assessment_blocked", "assessment_started", "assessment_completed",
		"approved", "execution_started", "execution_completed"}, actions)
	assert.Equal(f.t, auditorUser, records[0].PerformedBy)
	assert.Equal(f.t, adminUser, records[11].PerformedBy)
	for _, md := range f.streamMetadata(erasure.StreamID(id)) {
		if !strings.HasPrefix(md.Actor, "system") {
			assert.Equal(f.t, "Go-http-client/1.1", md.UserAgent, "the user agent of %s", md.Actor)
			assert.NotEmpty(f.t, md.CorrelationID)
		}
	}
}

// streamMetadata returns the metadata of every event of a stream, in order.
func (f *gdprFixture) streamMetadata(stream string) []domain.Metadata {
	f.t.Helper()
	recs, err := f.store.Load(context.Background(), stream)
	require.NoError(f.t, err)
	out := make([]domain.Metadata, len(recs))
	for i, rec := range recs {
		require.NoError(f.t, json.Unmarshal(rec.Metadata, &out[i]))
	}
	return out
}
