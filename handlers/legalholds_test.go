package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/legalhold"
)

const holdsPath = "/api/v1/admin/legal-holds"

// holdJSON is a hold as the API answers it; pointers tell null from empty.
type holdJSON struct {
	ID         string  `json:"id"`
	Type       string  `json:"type"`
	Value      string  `json:"value"`
	Reason     string  `json:"reason"`
	Matter     string  `json:"matter"`
	Status     string  `json:"status"`
	CreatedBy  string  `json:"created_by"`
	CreatedAt  string  `json:"created_at"`
	ReleasedBy *string `json:"released_by"`
	ReleasedAt *string `json:"released_at"`
}

type holdList struct {
	LegalHolds []holdJSON `json:"legal_holds"`
}

// placeHold places a hold as user and returns its id.
func (f *fixture) placeHold(user, body string) string {
	f.t.Helper()
	resp, raw := f.postAs(user, holdsPath, body)
	require.Equal(f.t, http.StatusCreated, resp.StatusCode, "place hold: %s", raw)
	var h holdJSON
	decode(f.t, raw, &h)
	return h.ID
}

// listHolds lists the holds user sees with query.
func (f *fixture) listHolds(user, query string) []holdJSON {
	f.t.Helper()
	resp, raw := f.getAs(user, holdsPath+query)
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "list holds: %s", raw)
	require.Contains(f.t, string(raw), `"legal_holds":[`, "a list is [], never null")
	var l holdList
	decode(f.t, raw, &l)
	return l.LegalHolds
}

func TestLegalHoldLifecycle(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		assert.Empty(t, f.listHolds(auditorUser, ""))
		resp, raw := f.do(holdsPath, as(auditorUser), withBody(http.MethodPost,
			`{"type":"domain","value":" @Example.TEST ","reason":"  subpoena 7 ","matter":"M-7"}`),
			func(r *http.Request) { r.Header.Set("X-Request-ID", "place-1") })
		require.Equal(t, http.StatusCreated, resp.StatusCode, "body %s", raw)
		var placed holdJSON
		decode(t, raw, &placed)
		checkPlaced(t, raw, placed)
		assert.Equal(t, holdsPath+"/"+placed.ID, resp.Header.Get("Location"))

		resp, raw = f.getAs(auditorUser, resp.Header.Get("Location"))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var got holdJSON
		decode(t, raw, &got)
		assert.Equal(t, placed, got)
		assert.Equal(t, []holdJSON{placed}, f.listHolds(auditorUser, "?status=active"))
		assert.Empty(t, f.listHolds(auditorUser, "?status=released"))

		resp, raw = f.postAs(adminUser, holdsPath+"/"+placed.ID+"/release", "")
		require.Equal(t, http.StatusOK, resp.StatusCode, "body %s", raw)
		var released holdJSON
		decode(t, raw, &released)
		assert.Equal(t, legalhold.StatusReleased, released.Status)
		require.NotNil(t, released.ReleasedBy)
		assert.Equal(t, adminUser, *released.ReleasedBy)
		require.NotNil(t, released.ReleasedAt)
		assert.Equal(t, []holdJSON{released}, f.listHolds(auditorUser, "?status=released"))
		assert.Empty(t, f.listHolds(adminUser, "?status=active"))

		resp, raw = f.postAs(auditorUser, holdsPath+"/"+placed.ID+"/release", "")
		require.Equal(t, http.StatusConflict, resp.StatusCode, "a second release: %s", raw)
		e := decodeError(t, raw)
		assert.Equal(t, "invalid_transition", e.Error.Code)
		assert.Equal(t, "hold "+placed.ID+" is released; release needs active", e.Error.Message)
		assert.Equal(t, map[string]any{"status": "released", "action": "release"}, e.Error.Details)
		checkHoldEvents(t, f, placed.ID)
	})
}

// checkPlaced checks a freshly placed hold: values normalised, unset values null.
func checkPlaced(t *testing.T, raw []byte, h holdJSON) {
	t.Helper()
	assert.Regexp(t, `^LH-[0-9a-f-]{36}$`, h.ID)
	assert.Equal(t, holdJSON{ID: h.ID, Type: "domain", Value: "example.test", Reason: "subpoena 7", Matter: "M-7",
		Status: "active", CreatedBy: auditorUser, CreatedAt: h.CreatedAt}, h)
	created, err := time.Parse(time.RFC3339, h.CreatedAt)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), created, time.Minute)
	assert.Regexp(t, `Z$`, h.CreatedAt, "times are UTC")
	var fields map[string]json.RawMessage
	decode(t, raw, &fields)
	assert.Equal(t, "null", string(fields["released_by"]), "unset values are null, never omitted")
	assert.Equal(t, "null", string(fields["released_at"]))
}

// checkHoldEvents requires the hold's two events in the ledger, each with who caused it
// and from where.
func checkHoldEvents(t *testing.T, f *fixture, id string) {
	t.Helper()
	rows, err := f.db.Query(f.db.Rebind(`SELECT event_type, metadata FROM events WHERE stream_id = ? ORDER BY position`), legalhold.StreamID(id))
	require.NoError(t, err)
	defer rows.Close()
	var types []string
	var metas []domain.Metadata
	for rows.Next() {
		var typ string
		var md []byte
		require.NoError(t, rows.Scan(&typ, &md))
		var m domain.Metadata
		require.NoError(t, json.Unmarshal(md, &m))
		types, metas = append(types, typ), append(metas, m)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{legalhold.EventPlaced, legalhold.EventReleased}, types)
	require.Len(t, metas, 2)
	assert.Equal(t, domain.Metadata{Actor: auditorUser, ClientIP: "127.0.0.1", UserAgent: "Go-http-client/1.1", CorrelationID: "place-1"}, metas[0])
	assert.Equal(t, adminUser, metas[1].Actor)
	assert.Len(t, metas[1].CorrelationID, 36, "a generated correlation id")
}

func TestLegalHoldRequestErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	id := f.placeHold(auditorUser, holdBody)
	cases := []struct {
		name, method, path, body string
		status                   int
		code, field              string
	}{
		{"truncated json", "POST", holdsPath, `{"type":`, 400, "invalid_json", ""},
		{"unknown field", "POST", holdsPath, `{"type":"address","value":"a@b.test","reason":"r","tenant":"x"}`, 400, "invalid_json", ""},
		{"bad type", "POST", holdsPath, `{"type":"person","value":"a@b.test","reason":"r"}`, 400, "validation_failed", "type"},
		{"bad address", "POST", holdsPath, `{"type":"address","value":"not an address","reason":"r"}`, 400, "validation_failed", "value"},
		{"bad domain", "POST", holdsPath, `{"type":"domain","value":"bad..example","reason":"r"}`, 400, "validation_failed", "value"},
		{"blank reason", "POST", holdsPath, `{"type":"address","value":"a@b.test","reason":"  "}`, 400, "validation_failed", "reason"},
		{"bad status", "GET", holdsPath + "?status=open", "", 400, "validation_failed", "status"},
		{"status twice", "GET", holdsPath + "?status=active&status=released", "", 400, "validation_failed", "status"},
		{"other tenant in single-tenant mode", "GET", holdsPath + "?tenant=acme.test", "", 400, "validation_failed", "tenant"},
		{"unknown hold", "GET", holdsPath + "/LH-nope", "", 404, "not_found", ""},
		{"release unknown", "POST", holdsPath + "/LH-nope/release", "", 404, "not_found", ""},
		{"delete", "DELETE", holdsPath + "/" + id, "", 405, "method_not_allowed", ""},
		{"get release", "GET", holdsPath + "/" + id + "/release", "", 405, "method_not_allowed", ""},
		{"put list", "PUT", holdsPath, "", 405, "method_not_allowed", ""},
	}
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
	assert.Len(t, f.listHolds(auditorUser, ""), 1, "no failed call placed a hold")
}
