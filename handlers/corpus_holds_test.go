package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/legalhold"
	"github.com/mailledger/mailledger/identity"
)

// TestCorpusHoldsEqualErasure: for every key of the corpus, the messages an active address
// hold on it keeps from purge (the archive's hold condition, holdProbe) are exactly those
// an erasure of it affects by the oracle, and a plain user with that address sees exactly
// those (Query.Participant; for corpusHandful over HTTP, list and message reads); for
// every domain, a domain hold keeps exactly the messages an erasure of all the domain's
// keys affects, which from=@domain and to=@domain find by role (docs/address-rule.md: the
// domain of each key compared with the hold's). Last, erasures of every key in turn,
// under an address hold, mark exactly the affected messages the hold does not cover.
func TestCorpusHoldsEqualErasure(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("SKIP: a hold, a purge and two searches per corpus address and domain (half a minute per database under -race); not with -short")
	}
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newCorpusFixture(t, d)
		p := newHoldProbe(t, f)
		for _, key := range f.oracle.keys {
			_, _, _, affected := f.oracle.scope(key)
			want := f.idsOf(affected)
			if got, ok := p.held(t, legalhold.TypeAddress, key); ok {
				assert.Equal(t, want, got, "address hold on %s: got %v; want %v", key, f.names(got), f.names(want))
			}
			seen := f.search(t, archive.Query{Participant: key})
			assert.Equal(t, want, seen, "participant %s: got %v; want %v", key, f.names(seen), f.names(want))
		}
		for _, dom := range f.oracle.domains {
			keys := f.oracle.domainKeys(dom)
			_, _, _, affected := f.oracle.scope(keys...)
			want := f.idsOf(affected)
			if got, ok := p.held(t, legalhold.TypeDomain, dom); ok {
				assert.Equal(t, want, got, "domain hold on %s: got %v; want %v", dom, f.names(got), f.names(want))
			}
			from, to := f.search(t, archive.Query{From: "@" + dom}), f.search(t, archive.Query{To: "@" + dom})
			assert.Equal(t, f.roleIDs(keys, true), from, "from=@%s: got %v", dom, f.names(from))
			assert.Equal(t, f.roleIDs(keys, false), to, "to=@%s: got %v", dom, f.names(to))
			sc, err := f.arc.Scope(t.Context(), app.DefaultTenant, keys)
			require.NoError(t, err)
			assert.Equal(t, len(want), sc.Affected, "Scope of the %d keys of %s", len(keys), dom)
		}
		for i, a := range corpusHandful {
			f.checkVisibilityOverHTTP(t, fmt.Sprintf("corpus-user-%d", i), strings.TrimSpace(a.written), a.key)
		}
		f.checkErasures(t, "sj@acts.hu")
	})
}

// checkErasures places an address hold on held, then erases every key of the corpus in
// turn, in key order: each erasure marks exactly the messages it affects that no earlier
// one marked and the hold does not cover, and the held messages stay.
func (f *corpusFixture) checkErasures(t *testing.T, held string) {
	t.Helper()
	ctx := t.Context()
	_, err := f.app.LegalHolds.Place(ctx, app.DefaultTenant, app.PlaceHoldInput{Type: legalhold.TypeAddress, Value: held, Reason: "corpus erasures"}, probeActor)
	require.NoError(t, err)
	want := map[int64]string{} // the request that erases each message, "" for none
	for id, m := range f.byID {
		want[id] = ""
		if m.has(held) {
			continue
		}
		for _, k := range f.oracle.keys {
			if m.has(k) {
				want[id] = "corpus-" + k
				break
			}
		}
	}
	for _, k := range f.oracle.keys {
		n, err := f.arc.Erase(ctx, archive.EraseRequest{Tenant: app.DefaultTenant, RequestID: "corpus-" + k, Addresses: []string{k}, Today: time.Now()})
		require.NoError(t, err)
		wantN := 0
		for _, r := range want {
			wantN += boolInt(r == "corpus-"+k)
		}
		assert.Equal(t, wantN, n, "erasure of %s", k)
	}
	rows, err := f.db.QueryContext(ctx, f.db.Rebind(`SELECT id, COALESCE(erased_by, '') FROM metadata WHERE tenant_id = ?`), app.DefaultTenant)
	require.NoError(t, err)
	defer rows.Close()
	got := map[int64]string{}
	for rows.Next() {
		var id int64
		var by string
		require.NoError(t, rows.Scan(&id, &by))
		got[id] = by
	}
	require.NoError(t, rows.Err())
	for id, m := range f.byID {
		assert.Equal(t, want[id], got[id], "%s: erased by", m.rel)
	}
}

// checkVisibilityOverHTTP lists the messages as a plain user whose address is written and
// reads each corpus message as that user: exactly the messages an erasure of key affects
// are listed and readable, every other one is 404.
func (f *corpusFixture) checkVisibilityOverHTTP(t *testing.T, user, written, key string) {
	t.Helper()
	_, _, _, affected := f.oracle.scope(key)
	want := f.idsOf(affected)
	f.addUser(user, identity.RoleUser, written, "example.test")
	var listed []int64
	for _, m := range f.list(user, url.Values{"limit": {"500"}}).Messages {
		listed = append(listed, m.ID)
	}
	assert.Equal(t, want, distinct(listed), "%s lists %v; want %v", written, f.names(distinct(listed)), f.names(want))
	for id, m := range f.byID {
		resp, raw := f.getAs(user, fmt.Sprintf("/api/v1/messages/%d", id))
		wantStatus := http.StatusNotFound
		if slices.Contains(want, id) {
			wantStatus = http.StatusOK
		}
		assert.Equal(t, wantStatus, resp.StatusCode, "%s reads %s: %s", written, m.rel, raw)
	}
}
