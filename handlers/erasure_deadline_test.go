package handlers_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/erasure"
)

type deadlineJSON struct {
	RequestID string `json:"request_id"`
	CreatedAt string `json:"created_at"`
	DueAt     string `json:"due_at"`
	Overdue   bool   `json:"overdue"`
	Status    string `json:"status"`
}

// TestDeadlines: a request is due 30 days after its creation; an auditor extends it up to
// 90 days with a reason, as an event of the request that its history, audit and
// certificate carry; the list sorts by due date; a closed request cannot be extended.
func TestDeadlines(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newGDPRFixture(t, d)
		f.archiveMail("default", archivetest.Message("subject@example.test", []string{"bob@example.test"}, nil, "hi", "x", day))
		f.runBackground()
		first := f.create(auditorUser, "subject@example.test")
		second := f.create(auditorUser, "other@example.test")
		f.await(first.RequestID, erasure.StatusPendingApproval) // the assessor appends no more to it
		var v deadlineJSON
		resp, raw := f.getAs(auditorUser, gdprPath+"/"+first.RequestID)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		decode(t, raw, &v)
		created, err := time.Parse(time.RFC3339, v.CreatedAt)
		require.NoError(t, err)
		due, err := time.Parse(time.RFC3339, v.DueAt)
		require.NoError(t, err)
		assert.WithinDuration(t, created.Add(30*24*time.Hour), due, time.Second, "due a month after creation")
		assert.False(t, v.Overdue)

		until := created.Add(80 * 24 * time.Hour).UTC().Format(time.DateOnly)
		resp, raw = f.postAs(auditorUser, gdprPath+"/"+first.RequestID+"/extend", `{"due_at":"`+until+`","reason":"two backups to search"}`)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		decode(t, raw, &v)
		assert.True(t, len(v.DueAt) >= 10 && v.DueAt[:10] == until, "due at the end of %s: %s", until, v.DueAt)

		for name, body := range map[string]string{
			"no reason":         `{"due_at":"` + until + `","reason":""}`,
			"past three months": `{"due_at":"` + created.Add(95*24*time.Hour).Format(time.DateOnly) + `","reason":"long"}`,
			"not a date":        `{"due_at":"soon","reason":"x"}`,
		} {
			resp, raw := f.postAs(auditorUser, gdprPath+"/"+first.RequestID+"/extend", body)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", name, raw)
		}
		resp, _ = f.postAs(plainUser, gdprPath+"/"+first.RequestID+"/extend", `{"due_at":"`+until+`","reason":"x"}`)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)

		var list struct {
			Requests []deadlineJSON `json:"requests"`
		}
		resp, raw = f.getAs(auditorUser, gdprPath+"?sort=due")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		decode(t, raw, &list)
		require.Len(t, list.Requests, 2)
		assert.Equal(t, []string{second.RequestID, first.RequestID}, []string{list.Requests[0].RequestID, list.Requests[1].RequestID}, "the earliest due first")
		resp, _ = f.getAs(auditorUser, gdprPath+"?sort=priority")
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		resp, raw = f.getAs(auditorUser, gdprPath+"?overdue=1")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		decode(t, raw, &list)
		assert.Empty(t, list.Requests, "none is past its due date yet")
		resp, _ = f.getAs(auditorUser, gdprPath+"?overdue=maybe")
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

		f.actOK(adminUser, first.RequestID, "approve", "", http.StatusOK)
		f.actOK(auditorUser, first.RequestID, "execute", "", http.StatusAccepted)
		f.await(first.RequestID, erasure.StatusCompleted)
		resp, raw = f.postAs(auditorUser, gdprPath+"/"+first.RequestID+"/extend", `{"due_at":"`+until+`T23:59:59Z","reason":"late"}`)
		assert.Equal(t, http.StatusConflict, resp.StatusCode, "a completed request has no deadline left: %s", raw)

		actions := map[string]bool{}
		for _, a := range f.audit(auditorUser, first.RequestID) {
			actions[a.Action] = true
		}
		assert.True(t, actions["deadline_extended"], "the audit shows the extension: %v", actions)
		resp, bundle := f.getAs(auditorUser, gdprPath+"/"+first.RequestID+"/certificate/bundle")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", bundle)
		_, err = certificate.VerifyBundle(bundle, f.publicKey())
		assert.NoError(t, err, "the certificate verifies with the extension in the request's stream")
	})
}
