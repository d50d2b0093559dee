package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
)

// eventJSON is a record of GET /api/v1/ledger/events.
type eventJSON struct {
	Position      int64           `json:"position"`
	StreamID      string          `json:"stream_id"`
	StreamType    string          `json:"stream_type"`
	StreamVersion int64           `json:"stream_version"`
	TenantID      string          `json:"tenant_id"`
	EventType     string          `json:"event_type"`
	SchemaVersion int             `json:"schema_version"`
	Payload       json.RawMessage `json:"payload"`
	Metadata      json.RawMessage `json:"metadata"`
	RecordedAt    string          `json:"recorded_at"`
	LeafHash      string          `json:"leaf_hash"`
	ChainHash     string          `json:"chain_hash"`
}

// leaf recomputes the event's leaf hash from what the API showed, as an auditor would
// (docs/ledger.md): the RFC 8785 form of the hashed fields.
func (e eventJSON) leaf(t *testing.T) string {
	t.Helper()
	at, err := time.Parse(eventstore.TimeFormat, e.RecordedAt)
	require.NoError(t, err)
	r := eventstore.Record{Position: e.Position, StreamID: e.StreamID, StreamType: e.StreamType, StreamVersion: e.StreamVersion,
		TenantID: e.TenantID, EventType: e.EventType, SchemaVersion: e.SchemaVersion, Payload: e.Payload, Metadata: e.Metadata, RecordedAt: at}
	return r.ComputeLeafHash().String()
}

type eventsPage struct {
	Events   []eventJSON `json:"events"`
	NextFrom *int64      `json:"next_from"`
}

func TestLedgerEventsOfTheCallersTenant(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f, msgA, _ := newTenantsFixture(t, d)
		holdA := f.placeHold(auditorA, holdBody)
		f.placeHold(auditorB, holdBody)
		checkStatus(t, f, auditorA, fmt.Sprintf("/api/v1/messages/%d", msgA), http.StatusOK) // a view: an event of a.test
		page := func(user, query string) eventsPage {
			t.Helper()
			resp, raw := f.getAs(user, "/api/v1/ledger/events"+query)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
			var p eventsPage
			decode(t, raw, &p)
			return p
		}

		all := page(auditorA, "")
		require.NotEmpty(t, all.Events)
		assert.Nil(t, all.NextFrom)
		for _, e := range all.Events {
			assert.Equal(t, "a.test", e.TenantID, "only the auditor's tenant: %+v", e)
			assert.Equal(t, e.LeafHash, e.leaf(t), "event %d's leaf hash recomputes from what the API shows", e.Position)
		}
		holds := page(auditorA, "?type=legalhold.placed")
		require.Len(t, holds.Events, 1)
		assert.Contains(t, string(holds.Events[0].Payload), holdA)
		byStream := page(auditorA, "?stream="+holds.Events[0].StreamID)
		assert.Equal(t, holds.Events, byStream.Events)

		var paged []eventJSON
		next := "?limit=1"
		for range len(all.Events) + 1 {
			p := page(auditorA, next)
			paged = append(paged, p.Events...)
			if p.NextFrom == nil {
				break
			}
			next = fmt.Sprintf("?limit=1&from=%d", *p.NextFrom)
		}
		assert.Equal(t, all.Events, paged, "page by page, the same events")

		tenants := map[string]bool{}
		for _, e := range page(adminUser, "?limit=1000").Events {
			tenants[e.TenantID] = true
		}
		assert.True(t, tenants["a.test"] && tenants["b.test"], "a global administrator reads every tenant's: %v", tenants)
		for _, only := range page(adminUser, "?tenant=b.test").Events {
			assert.Equal(t, "b.test", only.TenantID)
		}

		checkStatus(t, f, userA, "/api/v1/ledger/events", http.StatusForbidden)
		checkStatus(t, f, auditorA, "/api/v1/ledger/events?tenant=b.test", http.StatusForbidden)
		for _, bad := range []string{"?limit=0", "?limit=1001", "?from=0", "?from=x"} {
			resp, raw := f.getAs(auditorA, "/api/v1/ledger/events"+bad)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", bad, raw)
		}
	})
}
