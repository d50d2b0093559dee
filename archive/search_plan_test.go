package archive

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
)

// TestSQLiteSearchPagesNeedNoSort: on SQLite an address's, a domain's, a participant's and
// a date window's pages read an index in page order (address_role's date-key indexes, the
// tenant's date-key index), so a page of an address in a fifth of the archive costs the
// page, not a sort of every hit; also with a word besides. The plans are read with
// EXPLAIN QUERY PLAN. (A text search's hits are sorted when they are few, and otherwise
// the date index is walked.)
func TestSQLiteSearchPagesNeedNoSort(t *testing.T) {
	arc, db := newSearchArchive(t, database.SQLite)
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var raws [][]byte
	for i := range 60 {
		from := []string{"ann@a.test", "bob@b.test"}[i%2]
		raws = append(raws, archivetest.Message(from, []string{"dee@d.test", "eve@d.test"}, nil, "harbour crane", fmt.Sprintf("note %d", i), day.Add(time.Duration(i)*time.Hour)))
	}
	commitRaw(t, arc, "default", raws...)
	ctx := context.Background()
	for _, q := range []Query{
		{From: "ann@a.test"}, {To: "@d.test", Offset: 10}, {Participant: "eve@d.test"},
		{From: "ann@a.test", Text: "harbour"}, {To: "@d.test", DateFrom: day.Add(5 * time.Hour)},
		{DateFrom: day.Add(5 * time.Hour)}, {},
	} {
		q.Tenant = "default"
		st, err := arc.searchStatements(ctx, arc.db, &q)
		require.NoError(t, err)
		rows, err := db.QueryContext(ctx, `EXPLAIN QUERY PLAN `+st.page, st.pageArgs...)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		joined := strings.Join(plan, "\n")
		assert.NotContains(t, joined, "TEMP B-TREE", "%+v:\n%s", q, joined)
		t.Logf("%+v:\n%s", q, joined)
	}
}

// TestPostgresSearchReadsTheIndex: on PostgreSQL a search's statements run where the
// planner may not read message_search sequentially (searchRead): for a word most messages
// hold, that scan tests every document, each read from TOAST. On a table this small the
// planner would choose it for every word; the plans are read with EXPLAIN through the
// same transaction.
func TestPostgresSearchReadsTheIndex(t *testing.T) {
	arc, _ := newSearchArchive(t, database.Postgres)
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var raws [][]byte
	for i := range 40 {
		raws = append(raws, archivetest.Message("ann@a.test", []string{"dee@d.test"}, nil, "harbour crane", fmt.Sprintf("note %d", i), day.Add(time.Duration(i)*time.Hour)))
	}
	commitRaw(t, arc, "default", raws...)
	ctx := context.Background()
	for _, q := range []Query{{Text: "harbour"}, {Text: "harbour", DateFrom: day.Add(5 * time.Hour)}, {Text: "harbour crane", Offset: 10}} {
		q.Tenant = "default"
		err := arc.searchRead(ctx, func(r queryer) error {
			st, err := arc.searchStatements(ctx, r, &q)
			require.NoError(t, err)
			for _, s := range []struct {
				sql  string
				args []any
			}{{st.count, st.countArgs}, {st.page, st.pageArgs}} {
				rows, err := r.QueryContext(ctx, `EXPLAIN `+s.sql, s.args...)
				require.NoError(t, err)
				var plan []string
				for rows.Next() {
					var line string
					require.NoError(t, rows.Scan(&line))
					plan = append(plan, line)
				}
				require.NoError(t, rows.Close())
				joined := strings.Join(plan, "\n")
				assert.NotContains(t, joined, "Seq Scan on message_search", "%+v:\n%s", q, joined)
			}
			return nil
		})
		require.NoError(t, err)
	}
	msgs, total, err := arc.Search(ctx, Query{Tenant: "default", Text: "harbour", Limit: 5})
	require.NoError(t, err)
	assert.Equal(t, 40, total)
	assert.Len(t, msgs, 5)
}

// TestPostgresListedHitsCountThisSearchsOnly: on PostgreSQL a text search lists its hits
// once (hitLister), of every tenant, at most the drive cap and one; when the list is full,
// the matches among the listed are counted first and their count is the total only when it
// reaches MaxTotal+1. Here the listed hits are another tenant's (written first, so the
// index lists them first), and the total is still this tenant's.
func TestPostgresListedHitsCountThisSearchsOnly(t *testing.T) {
	arc, _ := newSearchArchive(t, database.Postgres)
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var other, mine [][]byte
	for i := range 20 {
		other = append(other, archivetest.Message("ann@a.test", []string{"dee@d.test"}, nil, "harbour", fmt.Sprintf("theirs %d", i), day.Add(time.Duration(i)*time.Hour)))
	}
	for i := range 10 {
		mine = append(mine, archivetest.Message("ann@a.test", []string{"dee@d.test"}, nil, "harbour", fmt.Sprintf("mine %d", i), day.Add(time.Duration(i)*time.Hour)))
	}
	commitRaw(t, arc, "other", other...)
	commitRaw(t, arc, "default", mine...)
	savedCap, savedMax := pgDriveCap, MaxTotal
	defer func() { pgDriveCap, MaxTotal = savedCap, savedMax }()
	ctx := context.Background()
	for _, c := range []struct {
		tenant   string
		cap, max int
		want     int
	}{
		{"default", 5, 5, 6},    // 10 matches, more than MaxTotal; the 6 listed are other's
		{"default", 5, 100, 10}, // all counted
		{"other", 5, 5, 6},      // the listed are this tenant's: their count is the total
		{"other", 50, 100, 20},  // all listed, within the cap: driven from the list
	} {
		pgDriveCap, MaxTotal = c.cap, c.max
		msgs, total, err := arc.Search(ctx, Query{Tenant: c.tenant, Text: "harbour", Limit: 3})
		require.NoError(t, err)
		assert.Equal(t, c.want, total, "%+v", c)
		require.Len(t, msgs, 3, "%+v", c)
		for _, m := range msgs {
			assert.Equal(t, c.tenant, m.TenantID, "%+v", c)
		}
	}
}
