package handlers_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/erasure"
)

type historyStep struct {
	Position   int64   `json:"position"`
	Type       string  `json:"type"`
	Actor      string  `json:"actor"`
	IPAddress  *string `json:"ip_address"`
	RecordedAt string  `json:"recorded_at"`
	LeafHash   string  `json:"leaf_hash"`
	ChainHash  string  `json:"chain_hash"`
	State      struct {
		Status         string  `json:"status"`
		EmailsAsSender int     `json:"emails_as_sender"`
		ApprovedBy     *string `json:"approved_by"`
		DeletedCount   int     `json:"deleted_count"`
	} `json:"state"`
}

// TestRequestHistoryReplaysTheLedger: the history of a request that went the whole way
// shows each event with the state it left, and each step's leaf hash is the one the
// ledger's inclusion proof gives for that position.
func TestRequestHistoryReplaysTheLedger(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newGDPRFixture(t, d)
		sent := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		f.archiveMail("default", archivetest.Message("subject@example.test", []string{"bob@example.test"}, nil, "hello", "x", sent))
		f.runBackground()
		req := f.create(auditorUser, "subject@example.test")
		f.await(req.RequestID, erasure.StatusPendingApproval)
		f.actOK(adminUser, req.RequestID, "approve", "", http.StatusOK)
		f.actOK(auditorUser, req.RequestID, "execute", "", http.StatusAccepted)
		done := f.await(req.RequestID, erasure.StatusCompleted)

		resp, raw := f.getAs(auditorUser, gdprPath+"/"+req.RequestID+"/history")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		var body struct {
			History []historyStep `json:"history"`
		}
		decode(t, raw, &body)
		h := body.History
		statuses := make([]string, len(h))
		for i, s := range h {
			statuses[i] = s.State.Status
			if i > 0 {
				assert.Greater(t, s.Position, h[i-1].Position, "oldest first")
			}
			resp, raw := f.getAs(auditorUser, fmt.Sprintf("/api/v1/ledger/proof?position=%d", s.Position))
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
			var proof struct {
				LeafHash string `json:"leaf_hash"`
			}
			decode(t, raw, &proof)
			assert.Equal(t, proof.LeafHash, s.LeafHash, "step %d is the ledger's event at %d", i, s.Position)
			assert.Len(t, s.ChainHash, 64)
		}
		assert.Equal(t, []string{erasure.StatusPending, erasure.StatusAssessing, erasure.StatusPendingApproval,
			erasure.StatusApproved, erasure.StatusExecuting, erasure.StatusCompleted}, statuses)
		assert.Equal(t, auditorUser, h[0].Actor)
		require.NotNil(t, h[0].IPAddress, "who created it and from where")
		assert.Equal(t, 1, h[2].State.EmailsAsSender, "the assessment's counts, as they were then")
		require.NotNil(t, h[3].State.ApprovedBy)
		assert.Equal(t, adminUser, *h[3].State.ApprovedBy)
		assert.Nil(t, h[2].State.ApprovedBy, "not yet approved before the approval")
		last := h[len(h)-1].State
		assert.Equal(t, done.DeletedCount, last.DeletedCount, "the replay reaches the state the request shows")

		resp, _ = f.getAs(plainUser, gdprPath+"/"+req.RequestID+"/history")
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		resp, _ = f.getAs(auditorUser, gdprPath+"/GDPR-2026-99999/history")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
}
