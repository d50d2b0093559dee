package handlers_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

type retentionRuleJSON struct {
	ID        string `json:"id"`
	TenantID  string `json:"tenant_id"`
	Kind      string `json:"kind"`
	Value     string `json:"value"`
	Days      int    `json:"days"`
	CreatedBy string `json:"created_by"`
}

// TestRetentionRulesOverHTTP: auditors and the global administrator manage the rules;
// a rule applies to the next message archived, without a restart; every change is in the
// ledger.
func TestRetentionRulesOverHTTP(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newGDPRFixture(t, d)
		policy, err := app.NewRetentionPolicy(f.db, app.RetentionPolicyConfig{Refresh: time.Hour})
		require.NoError(t, err)
		arc := policyArchive(t, f.fixture, policy)
		application, err := app.New(f.store, f.signer, app.ApplicationConfig{Archive: arc, RetentionChanged: policy.Invalidate})
		require.NoError(t, err)
		f.api.Attach(application)

		resp, raw := f.postAs(auditorUser, retentionRulesPath, `{"kind":"sender","value":"Legal <LEGAL@Example.test>","days":3650}`)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "a display name is not an address: %s", raw)
		resp, raw = f.postAs(auditorUser, retentionRulesPath, `{"kind":"sender","value":"LEGAL@Example.test","days":3650}`)
		require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", raw)
		var rule retentionRuleJSON
		decode(t, raw, &rule)
		assert.Equal(t, retentionRuleJSON{ID: rule.ID, TenantID: "default", Kind: "sender", Value: "legal@example.test", Days: 3650, CreatedBy: auditorUser}, rule)
		assert.Equal(t, retentionRulesPath+"/"+rule.ID, resp.Header.Get("Location"))

		sent := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		p, err := arc.Prepare(archive.Incoming{Tenant: "default", Raw: archivetest.Message("legal@example.test", []string{userAddress}, nil, "contract", "x", sent)})
		require.NoError(t, err)
		res, err := arc.Commit(context.Background(), []*archive.Prepared{p})
		require.NoError(t, err)
		m, err := arc.Get(context.Background(), "default", res[0].ID)
		require.NoError(t, err)
		assert.WithinDuration(t, m.Arrived.AddDate(0, 0, 3650), m.Retained, time.Second, "the rule applies at once")

		resp, raw = f.postAs(auditorUser, retentionRulesPath, `{"kind":"sender","value":"legal@example.test","days":10}`)
		assert.Equal(t, http.StatusConflict, resp.StatusCode, "one rule per kind and value: %s", raw)
		resp, raw = f.postAs(auditorUser, retentionRulesPath, `{"kind":"subject","value":"x","days":0}`)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", raw)
		e := decodeError(t, raw)
		assert.Equal(t, "validation_failed", e.Error.Code)
		assert.Contains(t, e.Error.Details["fields"], "kind")
		assert.Contains(t, e.Error.Details["fields"], "days")

		for _, user := range []string{plainUser, customerAdmin} {
			resp, _ = f.postAs(user, retentionRulesPath, `{"kind":"domain","value":"example.test","days":10}`)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, user)
			resp, _ = f.getAs(user, retentionRulesPath)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, user)
		}
		resp, raw = f.getAs(adminUser, retentionRulesPath)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		var list struct {
			Rules []retentionRuleJSON `json:"retention_rules"`
		}
		decode(t, raw, &list)
		assert.Len(t, list.Rules, 1)

		resp, _ = f.do(retentionRulesPath+"/"+rule.ID, as(auditorUser), withBody(http.MethodDelete, ""))
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
		resp, _ = f.getAs(auditorUser, retentionRulesPath+"/"+rule.ID)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		assert.Equal(t, 1, f.countEvents(app.EventRetentionRuleAdded))
		assert.Equal(t, 1, f.countEvents(app.EventRetentionRuleDeleted))
	})
}

const retentionRulesPath = "/api/v1/admin/retention-rules"

// policyArchive is an archive over the fixture's database and files with policy.
func policyArchive(t *testing.T, f *fixture, policy archive.RetentionPolicy) *archive.Archive {
	t.Helper()
	blobs, keys := arcParts(t, f)
	arc, err := archive.New(f.db, blobs, keys, archive.Options{Policy: policy})
	require.NoError(t, err)
	return arc
}
