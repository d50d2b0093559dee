package handlers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/erasure"
)

// The actions of the erasure API, and the body each is sent with.
var erasureActions = []struct{ name, body string }{
	{"assess", ""},
	{"approve", ""},
	{"reject", `{"reason":"identity not verified"}`},
	{"execute", ""},
}

// allowed is the status each action answers from each state (docs/api.md,
// "Erasure requests"); every other pair is 409 invalid_transition.
var allowed = map[string]map[string]int{
	"assess": {erasure.StatusPending: 202, erasure.StatusAssessing: 202, erasure.StatusBlocked: 202,
		erasure.StatusPendingApproval: 202},
	"approve": {erasure.StatusPendingApproval: 200},
	"reject":  {erasure.StatusPendingApproval: 200},
	"execute": {erasure.StatusApproved: 202},
}

// heldAddress is under an active hold in the transitions test: a request whose subject
// wrote to it is blocked.
const heldAddress = "held@hold.test"

// inState creates a request as the auditor and brings it to status without the
// background consumers (drain plays them where the state needs it); subject n names its
// own data subject.
func (f *gdprFixture) inState(status string, n int) requestJSON {
	f.t.Helper()
	subject := fmt.Sprintf("subject%d@people.test", n)
	if status == erasure.StatusBlocked {
		f.archiveMail("default", archivetest.Message(subject, []string{heldAddress}, nil, "to the held", "hi", day))
	}
	v := f.create(auditorUser, subject)
	switch status {
	case erasure.StatusAssessing:
		f.actOK(auditorUser, v.RequestID, "assess", "", http.StatusAccepted)
	case erasure.StatusBlocked, erasure.StatusPendingApproval:
		f.drain()
	case erasure.StatusApproved, erasure.StatusExecuting, erasure.StatusCompleted, erasure.StatusRejected:
		f.drain()
		f.advance(v.RequestID, status)
	}
	v = f.request(adminUser, v.RequestID)
	require.Equal(f.t, status, v.Status, "setting up %s", status)
	return v
}

// advance takes a pending_approval request on to approved, executing, completed or
// rejected.
func (f *gdprFixture) advance(id, status string) {
	f.t.Helper()
	if status == erasure.StatusRejected {
		f.actOK(adminUser, id, "reject", `{"reason":"duplicate request"}`, http.StatusOK)
		return
	}
	f.actOK(adminUser, id, "approve", "", http.StatusOK)
	if status == erasure.StatusApproved {
		return
	}
	f.actOK(adminUser, id, "execute", "", http.StatusAccepted)
	if status == erasure.StatusCompleted {
		f.drain()
	}
}

// TestErasureTransitionsOverHTTP sends every action to a request in every state: the
// allowed pairs answer their status, every other pair answers 409 invalid_transition
// with the state and the action, and changes nothing (the ledger's head and the request
// stay the same).
func TestErasureTransitionsOverHTTP(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newGDPRFixture(t, d)
		f.placeHold(auditorUser, `{"type":"address","value":"`+heldAddress+`","reason":"case 9"}`)
		n := 0
		for _, status := range erasure.Statuses {
			for _, action := range erasureActions {
				n++
				v := f.inState(status, n)
				before := f.head()
				resp, raw := f.act(adminUser, v.RequestID, action.name, action.body)
				want, ok := allowed[action.name][status]
				if ok {
					require.Equal(t, want, resp.StatusCode, "%s from %s: %s", action.name, status, raw)
					assert.Greater(t, f.head(), before, "%s from %s records an event", action.name, status)
					continue
				}
				require.Equal(t, http.StatusConflict, resp.StatusCode, "%s from %s: %s", action.name, status, raw)
				e := decodeError(t, raw)
				assert.Equal(t, "invalid_transition", e.Error.Code)
				assert.Equal(t, map[string]any{"status": status, "action": action.name}, e.Error.Details)
				assert.Equal(t, before, f.head(), "a refused %s from %s appends nothing", action.name, status)
				assert.Equal(t, v, f.request(adminUser, v.RequestID), "a refused %s from %s changes nothing", action.name, status)
			}
		}
	})
}

// TestErasureActionErrors checks the answers that do not depend on the state: unknown
// requests, a rejection without a reason, bad bodies and wrong methods.
func TestErasureActionErrors(t *testing.T) {
	t.Parallel()
	f := newGDPRFixture(t, database.SQLite)
	v := f.inState(erasure.StatusPendingApproval, 1)
	one := gdprPath + "/" + v.RequestID
	cases := []struct {
		name, method, path, body string
		status                   int
		code, field              string
	}{
		{"unknown request", "GET", gdprPath + "/GDPR-2026-99999", "", 404, "not_found", ""},
		{"assess unknown", "POST", gdprPath + "/GDPR-2026-99999/assess", "", 404, "not_found", ""},
		{"approve unknown", "POST", gdprPath + "/nope/approve", "", 404, "not_found", ""},
		{"reject unknown", "POST", gdprPath + "/nope/reject", `{"reason":"x"}`, 404, "not_found", ""},
		{"execute unknown", "POST", gdprPath + "/nope/execute", "", 404, "not_found", ""},
		{"audit unknown", "GET", gdprPath + "/nope/audit", "", 404, "not_found", ""},
		{"certificate unknown", "GET", gdprPath + "/nope/certificate", "", 404, "not_found", ""},
		{"pdf unknown", "GET", gdprPath + "/nope/certificate/pdf", "", 404, "not_found", ""},
		{"bundle unknown", "GET", gdprPath + "/nope/certificate/bundle", "", 404, "not_found", ""},
		{"reject without reason", "POST", one + "/reject", `{}`, 400, "validation_failed", "reason"},
		{"reject with blank reason", "POST", one + "/reject", `{"reason":"   "}`, 400, "validation_failed", "reason"},
		{"reject with a long reason", "POST", one + "/reject", `{"reason":"` + longText(2001) + `"}`, 400, "validation_failed", "reason"},
		{"reject without body", "POST", one + "/reject", "", 400, "invalid_json", ""},
		{"reject with unknown field", "POST", one + "/reject", `{"reason":"x","why":"y"}`, 400, "invalid_json", ""},
		{"certificate not ready", "GET", one + "/certificate", "", 409, "certificate_not_available", ""},
		{"pdf not ready", "GET", one + "/certificate/pdf", "", 409, "certificate_not_available", ""},
		{"bundle not ready", "GET", one + "/certificate/bundle", "", 409, "certificate_not_available", ""},
		{"get approve", "GET", one + "/approve", "", 405, "method_not_allowed", ""},
		{"delete request", "DELETE", one, "", 405, "method_not_allowed", ""},
		{"put list", "PUT", gdprPath, "", 405, "method_not_allowed", ""},
		{"post audit", "POST", one + "/audit", "", 405, "method_not_allowed", ""},
	}
	before := f.head()
	for _, tc := range cases {
		resp, raw := f.do(tc.path, as(auditorUser), withBody(tc.method, tc.body))
		require.Equal(t, tc.status, resp.StatusCode, "%s: body %s", tc.name, raw)
		e := decodeError(t, raw)
		assert.Equal(t, tc.code, e.Error.Code, tc.name)
		if tc.field != "" {
			fields, ok := e.Error.Details["fields"].(map[string]any)
			require.True(t, ok, "%s: details.fields in %s", tc.name, raw)
			assert.Contains(t, fields, tc.field, tc.name)
		}
	}
	assert.Equal(t, before, f.head(), "no failed call appended anything")
	assert.Equal(t, v, f.request(auditorUser, v.RequestID))
}

func longText(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}

// TestConcurrentApprovalsAndCreates checks the races of docs/api.md: of 20 concurrent
// approvals exactly one wins (the others are 409), and 50 concurrent creates get 50
// distinct request ids.
func TestConcurrentApprovalsAndCreates(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newGDPRFixture(t, d)
		v := f.inState(erasure.StatusPendingApproval, 1)
		codes := make([]int, 20)
		var wg sync.WaitGroup
		for i := range codes {
			wg.Go(func() {
				codes[i], _ = f.post(t, adminUser, gdprPath+"/"+v.RequestID+"/approve", "")
			})
		}
		wg.Wait()
		count := map[int]int{}
		for _, c := range codes {
			count[c]++
		}
		assert.Equal(t, map[int]int{200: 1, 409: 19}, count)
		assert.Equal(t, 1, f.countEvents(erasure.EventApproved))

		ids := make([]string, 50)
		for i := range ids {
			wg.Go(func() {
				body := fmt.Sprintf(`{"email_addresses":["racer%d@people.test"]}`, i)
				status, raw := f.post(t, auditorUser, gdprPath, body)
				var r requestJSON
				if assert.Equal(t, http.StatusCreated, status, "create %d: %s", i, raw) &&
					assert.NoError(t, json.Unmarshal(raw, &r)) {
					ids[i] = r.RequestID
				}
			})
		}
		wg.Wait()
		distinct := map[string]bool{}
		for _, id := range ids {
			assert.NotEmpty(t, id)
			distinct[id] = true
		}
		assert.Len(t, distinct, 50)
		assert.Equal(t, 51, f.total())
	})
}

// post posts body to path as user from any goroutine: failures are reported with assert
// on t, never with FailNow, and answer status 0.
func (f *gdprFixture) post(t *testing.T, user, path, body string) (int, []byte) {
	req, err := http.NewRequest(http.MethodPost, f.http.URL+path, strings.NewReader(body))
	if !assert.NoError(t, err) {
		return 0, nil
	}
	req.SetBasicAuth(user, adminPass)
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.http.Client().Do(req)
	if !assert.NoError(t, err) {
		return 0, nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	assert.NoError(t, err)
	return resp.StatusCode, raw
}

// total returns the total of the request list.
func (f *gdprFixture) total() int {
	f.t.Helper()
	resp, raw := f.getAs(adminUser, gdprPath+"?limit=1")
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "list: %s", raw)
	var l requestList
	decode(f.t, raw, &l)
	return l.Total
}

// TestExecuteRechecksHolds checks docs/api.md: a hold placed after approval sends the
// executed request to blocked (202, nothing erased); once released, the request is
// assessed, approved and executed again.
func TestExecuteRechecksHolds(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newGDPRFixture(t, d)
		ids := f.archiveMail("default", archivetest.Message("late@people.test", []string{"witness@people.test"}, nil, "hello", "hi", day))
		v := f.create(auditorUser, "late@people.test")
		f.drain()
		f.actOK(adminUser, v.RequestID, "approve", "", http.StatusOK)
		hold := f.placeHold(auditorUser, `{"type":"domain","value":"people.test","reason":"late subpoena"}`)
		v = f.actOK(auditorUser, v.RequestID, "execute", "", http.StatusAccepted)
		assert.Equal(t, erasure.StatusBlocked, v.Status)
		assert.Equal(t, []string{hold}, v.LegalHoldIDs)
		f.drain()
		resp, raw := f.get(fmt.Sprintf("/api/v1/messages/%d", ids[0]))
		assert.Equal(t, http.StatusOK, resp.StatusCode, "nothing was erased: %s", raw)
		audit := f.audit(auditorUser, v.RequestID)
		assert.Equal(t, "execution_blocked", audit[len(audit)-1].Action)

		resp, raw = f.postAs(auditorUser, holdsPath+"/"+hold+"/release", "")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		f.actOK(auditorUser, v.RequestID, "assess", "", http.StatusAccepted)
		f.drain()
		f.actOK(adminUser, v.RequestID, "approve", "", http.StatusOK)
		f.actOK(adminUser, v.RequestID, "execute", "", http.StatusAccepted)
		f.drain()
		v = f.request(auditorUser, v.RequestID)
		assert.Equal(t, erasure.StatusCompleted, v.Status)
		assert.Equal(t, 1, v.DeletedCount)
		resp, _ = f.get(fmt.Sprintf("/api/v1/messages/%d", ids[0]))
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
}
