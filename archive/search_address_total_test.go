package archive

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// addressFixture is one message of TestSearchAddressTotalsMatchOracle as the oracle sees
// it.
type addressFixture struct {
	id      int64
	date    time.Time
	from    string
	to      []string
	visible bool
}

func (f addressFixture) matches(q Query) bool {
	if !f.visible {
		return false
	}
	has := func(addrs []string, want string) bool {
		want = strings.ToLower(want) // addresses match case-insensitively
		return slices.ContainsFunc(addrs, func(a string) bool {
			if dom, ok := strings.CutPrefix(want, "@"); ok {
				return strings.HasSuffix(a, "@"+dom)
			}
			return a == want
		})
	}
	return (q.From == "" || has([]string{f.from}, q.From)) && (q.To == "" || has(f.to, q.To))
}

// TestSearchAddressTotalsMatchOracle: a search by one address alone takes its total from
// address_role's rows less the erased messages among them (addressTotal), in an archive of
// one tenant. Totals and pages must equal the oracle's as messages are erased, purged
// (whose roles go, but an erased message's), when the counts reach MaxTotal, and once
// another tenant's mail makes the search count by looking each hit up again.
func TestSearchAddressTotalsMatchOracle(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		arc, db := newSearchArchive(t, d)
		base := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
		var raws [][]byte
		var fixtures []addressFixture
		for i := range 60 {
			f := addressFixture{date: base.Add(time.Duration(i) * time.Hour), from: fmt.Sprintf("s%d@x.test", i%4),
				to: []string{fmt.Sprintf("r%d@y.test", i%3)}, visible: true}
			if i%5 == 0 { // a second recipient of the domain: one message, two rows of it
				f.to = append(f.to, "q@y.test")
			}
			if i%7 == 0 {
				f.to = append(f.to, "t@z.test")
			}
			raws = append(raws, archivetest.Message(f.from, f.to, nil, fmt.Sprintf("m%d", i), "body", f.date))
			fixtures = append(fixtures, f)
		}
		for i, res := range commitRaw(t, arc, "default", raws...) {
			fixtures[i].id = res.ID
		}
		cases := []Query{
			{From: "s0@x.test"}, {From: "s1@x.test"}, {From: "s2@x.test"}, {From: "@x.test"}, {From: "S3@X.test"},
			{To: "r0@y.test"}, {To: "q@y.test"}, {To: "@y.test"}, {To: "@z.test"}, {To: "nobody@y.test"},
			{From: "@y.test"}, {To: "@x.test"}, {From: "@x.test", Offset: 40},
		}
		check := func(t *testing.T, indexTotal bool) {
			t.Helper()
			for _, q := range cases {
				q.Tenant, q.Limit = "default", 7
				want := []int64{}
				total := 0
				for i := len(fixtures) - 1; i >= 0; i-- { // newest first: dates rise with i
					if f := fixtures[i]; f.matches(q) {
						if total >= q.Offset && len(want) < q.Limit {
							want = append(want, f.id)
						}
						total++
					}
				}
				msgs, n, err := arc.Search(ctx, q)
				require.NoError(t, err, "%+v", q)
				got := make([]int64, len(msgs))
				for i, m := range msgs {
					got[i] = m.ID
				}
				assert.Equal(t, min(total, MaxTotal+1), n, "total of %+v", q)
				assert.Equal(t, want, got, "page of %+v", q)
				st, err := arc.searchStatements(ctx, arc.db, &q)
				require.NoError(t, err)
				assert.Equal(t, indexTotal, st.totalKnown, "total of %+v from address_role", q)
			}
		}
		t.Run("one tenant", func(t *testing.T) { check(t, true) })

		// Erased messages keep their roles: the total leaves them out.
		_, err := arc.Erase(ctx, EraseRequest{Tenant: "default", RequestID: "GDPR-2026-00077", Addresses: []string{"s1@x.test"}, Today: base})
		require.NoError(t, err)
		for i := range fixtures {
			if fixtures[i].from == "s1@x.test" {
				fixtures[i].visible = false
			}
		}
		t.Run("erased", func(t *testing.T) { check(t, true) })

		// Purge: s2's messages dated before the tenth hour reach their retention, and the
		// erased ones theirs. The purged messages' roles go, the erased ones' stay.
		var expired []int64
		for _, f := range fixtures {
			if f.from == "s2@x.test" && f.date.Before(base.Add(10*time.Hour)) {
				expired = append(expired, f.id)
			}
		}
		require.NotEmpty(t, expired)
		_, err = db.ExecContext(ctx, db.Rebind(`UPDATE metadata SET retained = ? WHERE id IN (`+database.InList(len(expired))+`)`),
			append([]any{database.TimeArg(d, base.Add(-time.Hour))}, int64Args(expired)...)...)
		require.NoError(t, err)
		res, err := arc.Purge(ctx, base.Add(24*time.Hour), PurgeOptions{})
		require.NoError(t, err)
		erased := 15 // s1's
		require.Equal(t, len(expired)+erased, res.Purged)
		for i := range fixtures {
			if slices.Contains(expired, fixtures[i].id) {
				fixtures[i].visible = false
			}
		}
		var left, erasedRoles int
		require.NoError(t, db.QueryRowContext(ctx, db.Rebind(`SELECT COUNT(*) FROM address_role WHERE id IN (`+database.InList(len(expired))+`)`),
			int64Args(expired)...).Scan(&left))
		assert.Zero(t, left, "the purged messages' roles are gone")
		require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM address_role r JOIN metadata m ON m.id = r.id WHERE m.erased_by IS NOT NULL AND r.role = 1`).Scan(&erasedRoles))
		assert.Equal(t, erased, erasedRoles, "the erased messages keep their roles")
		t.Run("purged", func(t *testing.T) { check(t, true) })

		// Counts past MaxTotal: known without erased messages among the hits, counted
		// again with them (the capped count cannot tell how many the erased ones hide).
		savedCap, savedPG, savedMax := sqliteDriveCap, pgDriveCap, MaxTotal
		sqliteDriveCap, pgDriveCap, MaxTotal = 4, 4, 4
		t.Run("capped", func(t *testing.T) {
			defer func() { sqliteDriveCap, pgDriveCap, MaxTotal = savedCap, savedPG, savedMax }()
			for _, q := range []Query{{From: "s0@x.test"}, {From: "@x.test"}, {To: "@y.test"}} {
				q.Tenant = "default"
				_, n, err := arc.Search(ctx, q)
				require.NoError(t, err)
				assert.Equal(t, MaxTotal+1, n, "%+v", q)
			}
			if d != database.MySQL { // MySQL's drive cap is its own: its counts stay exact here
				st, err := arc.searchStatements(ctx, arc.db, &Query{Tenant: "default", From: "s0@x.test"})
				require.NoError(t, err)
				assert.True(t, st.totalKnown, "no erased message among s0's hits")
				st, err = arc.searchStatements(ctx, arc.db, &Query{Tenant: "default", From: "@x.test"})
				require.NoError(t, err)
				assert.False(t, st.totalKnown, "erased messages among x.test's capped hits")
			}
		})

		// Another tenant's mail: address_role does not say whose a role is.
		commitRaw(t, arc, "other", archivetest.Message("s0@x.test", []string{"r0@y.test"}, nil, "theirs", "body", base))
		t.Run("two tenants", func(t *testing.T) { check(t, false) })
	})
}
