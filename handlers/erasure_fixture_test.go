package handlers_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
)

const gdprPath = "/api/v1/admin/gdpr/requests"

// requestJSON is an erasure request as the API answers it; pointers tell null from set.
type requestJSON struct {
	ID                   int64    `json:"id"`
	RequestID            string   `json:"request_id"`
	EmailAddresses       []string `json:"email_addresses"`
	RequesterName        *string  `json:"requester_name"`
	Status               string   `json:"status"`
	EmailsAsSender       int      `json:"emails_as_sender"`
	EmailsAsRecipient    int      `json:"emails_as_recipient"`
	AttachmentsCount     int      `json:"attachments_count"`
	BlockedByLegalHold   bool     `json:"blocked_by_legal_hold"`
	LegalHoldIDs         []string `json:"legal_hold_ids"`
	BlockedReason        *string  `json:"blocked_reason"`
	CreatedBy            string   `json:"created_by"`
	CreatedAt            string   `json:"created_at"`
	ApprovedBy           *string  `json:"approved_by"`
	ApprovedAt           *string  `json:"approved_at"`
	RejectionReason      *string  `json:"rejection_reason"`
	ExecutedAt           *string  `json:"executed_at"`
	DeletedCount         int      `json:"deleted_count"`
	RedactedCount        int      `json:"redacted_count"`
	CertificateHash      *string  `json:"certificate_hash"`
	CertificateAvailable bool     `json:"certificate_available"`
}

// requestKeys are exactly the keys of a request object: the columns of gdpr_requests plus
// certificate_available (docs/api.md).
var requestKeys = []string{"id", "request_id", "email_addresses", "requester_name", "status",
	"emails_as_sender", "emails_as_recipient", "attachments_count", "blocked_by_legal_hold",
	"legal_hold_ids", "blocked_reason", "created_by", "created_at", "approved_by", "approved_at",
	"rejection_reason", "executed_at", "deleted_count", "redacted_count", "certificate_hash",
	"certificate_available", "due_at", "overdue"}

type requestList struct {
	Requests []requestJSON `json:"requests"`
	Total    int           `json:"total"`
	Limit    int           `json:"limit"`
	Offset   int           `json:"offset"`
}

// auditJSON is one audit record as the API answers it.
type auditJSON struct {
	ID          int64           `json:"id"`
	RequestID   string          `json:"request_id"`
	Action      string          `json:"action"`
	PerformedBy string          `json:"performed_by"`
	PerformedAt string          `json:"performed_at"`
	Details     json.RawMessage `json:"details"`
	IPAddress   *string         `json:"ip_address"`
}

// gdprFixture is the API with the erasure workflow: a fixture whose application has the
// erasure use cases, with or without the background consumers.
type gdprFixture struct {
	*fixture
	app     *app.Application
	drained int64 // the ledger position up to which drain delivered events
}

// newGDPRFixture serves the API over a fresh database of dialect d with the users of
// newFixture; configure changes the application's configuration beyond the archive.
func newGDPRFixture(t *testing.T, d database.Dialect, configure ...func(*app.ApplicationConfig)) *gdprFixture {
	t.Helper()
	return newGDPRFixtureWith(t, d, nil, configure...)
}

func newGDPRFixtureWith(t *testing.T, d database.Dialect, configure func(*handlers.Options), configureApp ...func(*app.ApplicationConfig)) *gdprFixture {
	t.Helper()
	var conf []func(*handlers.Options)
	if configure != nil {
		conf = append(conf, configure)
	}
	f := &gdprFixture{fixture: newDetachedFixture(t, d, conf...)}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", f.logs)
		}
	})
	f.addUser(adminUser, identity.RoleAdmin, "", identity.LocalDomain)
	f.addUser(auditorUser, identity.RoleAuditor, "auditor@example.test", "example.test")
	f.addUser(plainUser, identity.RoleUser, userAddress, "example.test")
	f.addUser(customerAdmin, identity.RoleAdmin, "", "example.test")
	var err error
	cfg := app.ApplicationConfig{Archive: f.arc, Multitenancy: f.multi}
	for _, c := range configureApp {
		c(&cfg)
	}
	f.app, err = app.New(f.store, f.signer, cfg)
	require.NoError(t, err)
	f.api.Attach(f.app)
	return f
}

// runBackground runs the real consumers (assessor and executor) until the test ends.
func (f *gdprFixture) runBackground() {
	f.t.Helper()
	bg, err := app.NewBackground(f.store, app.BackgroundConfig{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(f.t, err)
	f.app.Erasure.Register(bg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bg.Run(ctx) }()
	<-bg.Running()
	f.t.Cleanup(func() {
		cancel()
		require.NoError(f.t, <-done)
	})
}

// drain delivers every event appended since the last drain to the assessor and the
// executor, in order, as the background would, until the ledger is quiet. Tests that
// must hold a request in pending, assessing or executing use it instead of the
// background.
func (f *gdprFixture) drain() {
	f.t.Helper()
	ctx := context.Background()
	for {
		recs, err := f.store.ReadAll(ctx, f.drained, 100)
		require.NoError(f.t, err)
		if len(recs) == 0 {
			return
		}
		for _, rec := range recs {
			require.NoError(f.t, f.app.Erasure.HandleAssessment(ctx, rec), "assessor at %d", rec.Position)
			require.NoError(f.t, f.app.Erasure.HandleExecution(ctx, rec), "executor at %d", rec.Position)
			f.drained = rec.Position
		}
	}
}

// create creates a request as user for addrs and returns it.
func (f *gdprFixture) create(user string, addrs ...string) requestJSON {
	f.t.Helper()
	body, err := json.Marshal(map[string]any{"email_addresses": addrs, "requester_name": "Data Subject"})
	require.NoError(f.t, err)
	resp, raw := f.postAs(user, gdprPath, string(body))
	require.Equal(f.t, http.StatusCreated, resp.StatusCode, "create: %s", raw)
	var v requestJSON
	decode(f.t, raw, &v)
	require.Equal(f.t, gdprPath+"/"+v.RequestID, resp.Header.Get("Location"))
	return v
}

// request reads one request as user.
func (f *gdprFixture) request(user, id string) requestJSON {
	f.t.Helper()
	resp, raw := f.getAs(user, gdprPath+"/"+id)
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "get %s: %s", id, raw)
	var v requestJSON
	decode(f.t, raw, &v)
	return v
}

// await polls the request until it reaches status.
func (f *gdprFixture) await(id, status string) requestJSON {
	f.t.Helper()
	var v requestJSON
	require.Eventually(f.t, func() bool {
		v = f.request(adminUser, id)
		return v.Status == status
	}, 30*time.Second, 20*time.Millisecond, "request %s never reached %s", id, status)
	return v
}

// act posts an action ("assess", "approve", "reject", "execute") on a request as user.
func (f *gdprFixture) act(user, id, action, body string) (*http.Response, []byte) {
	f.t.Helper()
	return f.postAs(user, gdprPath+"/"+id+"/"+action, body)
}

// actOK posts an action and requires want, returning the request it answers.
func (f *gdprFixture) actOK(user, id, action, body string, want int) requestJSON {
	f.t.Helper()
	resp, raw := f.act(user, id, action, body)
	require.Equal(f.t, want, resp.StatusCode, "%s %s as %s: %s", action, id, user, raw)
	var v requestJSON
	decode(f.t, raw, &v)
	return v
}

// audit returns the audit records of a request as user.
func (f *gdprFixture) audit(user, id string) []auditJSON {
	f.t.Helper()
	resp, raw := f.getAs(user, gdprPath+"/"+id+"/audit")
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "audit %s: %s", id, raw)
	var out struct {
		Audit []auditJSON `json:"audit"`
	}
	decode(f.t, raw, &out)
	require.NotNil(f.t, out.Audit, "audit is [], never null")
	return out.Audit
}

// head returns the ledger's size.
func (f *gdprFixture) head() int64 {
	f.t.Helper()
	h, err := f.store.Head(context.Background())
	require.NoError(f.t, err)
	return h.Size
}

// publicKey fetches the ledger's public key over HTTP.
func (f *gdprFixture) publicKey() string {
	f.t.Helper()
	resp, raw := f.getAs(auditorUser, "/api/v1/ledger/public-key")
	require.Equal(f.t, http.StatusOK, resp.StatusCode)
	return strings.TrimSpace(string(raw))
}
