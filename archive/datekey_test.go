package archive

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/migrations"
)

// TestDateKeyOrdersByDateThenID: keys compare as (date to the second, id); dates outside
// 1900..2172 share the key seconds of the nearest end, and their ids still order them.
func TestDateKeyOrdersByDateThenID(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return tm
	}
	ordered := []struct {
		date string
		id   int64
	}{
		{"1066-10-14T09:00:00Z", 7}, {"1850-01-01T00:00:00Z", 8}, {"1900-01-01T00:00:00Z", 9},
		{"1969-12-31T23:59:59.999Z", 2}, {"1970-01-01T00:00:00Z", 3},
		{"2026-11-26T10:00:00Z", 4}, {"2026-11-26T10:00:00.9Z", 5}, {"2026-11-26T10:00:00Z", 1<<30 - 1},
		{"2026-11-26T10:00:01Z", 1}, {"2172-06-01T00:00:00Z", 2}, {"2999-01-01T00:00:00Z", 3},
	}
	for i := 1; i < len(ordered); i++ {
		a, b := ordered[i-1], ordered[i]
		assert.Less(t, DateKey(at(a.date), a.id), DateKey(at(b.date), b.id), "%v before %v", a, b)
	}
	assert.Positive(t, DateKey(at("1066-10-14T09:00:00Z"), 1))
	assert.Positive(t, DateKey(at("9999-12-31T23:59:59Z"), 1<<40))
	// A date with a zone: the key is of the instant.
	assert.Equal(t, DateKey(at("2026-11-26T10:00:00Z"), 9), DateKey(at("2026-11-26T11:00:00+01:00"), 9))
}

// TestDateKeyMigrationAgrees: the migration that added the column computed, for the rows
// already there, the keys archive.DateKey computes for new ones.
func TestDateKeyMigrationAgrees(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		db := dbtest.OpenUnmigrated(t, d)
		before := map[database.Dialect]int64{database.SQLite: 9, database.Postgres: 9, database.MySQL: 10}[d]
		ctx := context.Background()
		require.NoError(t, migrations.UpTo(ctx, db, before))
		dates := []time.Time{
			time.Date(1850, 3, 1, 12, 0, 0, 0, time.UTC),
			time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
			time.Date(2026, 11, 26, 10, 0, 0, 750_000_000, time.UTC),
			time.Date(2026, 11, 26, 10, 0, 0, 0, time.FixedZone("", 3600)),
			time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC),
		}
		ids := []int64{1, 2, 1 << 30, 1<<30 + 5, 77, 3}
		for i, date := range dates {
			_, err := db.Exec(db.Rebind(`INSERT INTO metadata (id, tenant_id, "from", fromdomain, subject, arrived, sent, msgdate, retained, size,
				message_id, in_reply_to, refs, digest, bodydigest, key_id) VALUES (?, 'acme', '', '', '', ?, ?, ?, ?, 10, '', '', '', ?, ?, 'k')`),
				ids[i], database.TimeArg(d, date), database.TimeArg(d, date), database.TimeArg(d, date), database.TimeArg(d, date.AddDate(10, 0, 0)),
				fmt.Sprintf("%064d", i), fmt.Sprintf("%064d", i))
			require.NoError(t, err)
		}
		require.NoError(t, migrations.Up(ctx, db))
		for i, date := range dates {
			var key int64
			require.NoError(t, db.QueryRow(db.Rebind(`SELECT datekey FROM metadata WHERE id = ?`), ids[i]).Scan(&key))
			assert.Equal(t, DateKey(date.UTC().Truncate(time.Microsecond), ids[i]), key, "message dated %s, id %d", date, ids[i])
		}
	})
}

// TestSearchDateWindowIsExact: the date key holds whole seconds and clamps its years, but
// a date window still takes exactly the messages dated in [from, to): arrivals with
// fractions of a second at its edges, and dates before 1900 and after 2172.
func TestSearchDateWindowIsExact(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		arc, _ := newSearchArchive(t, d)
		edge := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
		arrivals := []time.Time{ // no Date header: the arrival is the date
			edge.Add(-time.Millisecond), edge, edge.Add(400 * time.Millisecond), edge.Add(600 * time.Millisecond), edge.Add(time.Second),
		}
		var batch []*Prepared
		for i, at := range arrivals {
			raw := fmt.Appendf(nil, "From: ann@a.test\r\nTo: bob@b.test\r\nSubject: edge %d\r\n\r\nharbour\r\n", i)
			p, err := arc.Prepare(Incoming{Tenant: "acme", Raw: raw, Arrived: at})
			require.NoError(t, err)
			batch = append(batch, p)
		}
		for i, date := range []string{"Mon, 1 Jan 1849 10:00:00 +0000", "Sat, 1 Jan 1898 10:00:00 +0000", "Tue, 1 Jan 2200 10:00:00 +0000", "Wed, 1 Jan 2500 10:00:00 +0000"} {
			raw := fmt.Appendf(nil, "From: ann@a.test\r\nTo: bob@b.test\r\nSubject: far %d\r\nDate: %s\r\n\r\nharbour\r\n", i, date)
			p, err := arc.Prepare(Incoming{Tenant: "acme", Raw: raw, Arrived: edge})
			require.NoError(t, err)
			batch = append(batch, p)
		}
		res, err := arc.Commit(context.Background(), batch)
		require.NoError(t, err)
		id := func(i int) int64 { return res[i].ID }
		for _, c := range []struct {
			from, to time.Time
			want     []int64 // newest first
		}{
			{edge.Add(400 * time.Millisecond), edge.Add(600 * time.Millisecond), []int64{id(2)}},
			{edge.Add(400 * time.Millisecond), edge.Add(601 * time.Millisecond), []int64{id(3), id(2)}},
			{edge, edge.Add(time.Second), []int64{id(3), id(2), id(1)}},
			{edge.Add(-time.Millisecond), edge.Add(time.Millisecond), []int64{id(1), id(0)}},
			{time.Time{}, time.Date(1850, 1, 1, 0, 0, 0, 0, time.UTC), []int64{id(5)}},
			{time.Date(1849, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1899, 1, 1, 0, 0, 0, 0, time.UTC), []int64{id(6), id(5)}},
			{time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}, []int64{id(8)}},
			{time.Date(2199, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2201, 1, 1, 0, 0, 0, 0, time.UTC), []int64{id(7)}},
		} {
			for _, text := range []string{"", "harbour"} {
				q := Query{Tenant: "acme", Text: text, DateFrom: c.from, DateTo: c.to}
				assert.Equal(t, c.want, searchIDs(t, arc, q), "%s from %s to %s", text, c.from, c.to)
			}
		}
	})
}

// TestExactDateKeyBounds: a window of whole seconds inside the date key's range is exactly
// the keys lo to hi; a fraction of a second or a bound past the range is not.
func TestExactDateKeyBounds(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	later := at.Add(time.Hour)
	lo, hi, exact := exactDateKeyBounds(at, later)
	require.True(t, exact)
	for _, c := range []struct {
		date time.Time
		in   bool
	}{
		{at.Add(-time.Microsecond), false},
		{at, true},
		{at.Add(999 * time.Millisecond), true},
		{later.Add(-time.Microsecond), true},
		{later, false},
	} {
		key := DateKey(c.date, 12345)
		assert.Equal(t, c.in, key >= lo && key <= hi, "%s", c.date)
	}
	lo, hi, exact = exactDateKeyBounds(time.Time{}, time.Time{})
	assert.True(t, exact)
	assert.True(t, lo <= DateKey(time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC), 0) && hi >= DateKey(time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC), dateKeyIDMask), "no bounds: every key")
	for _, c := range [][2]time.Time{
		{at.Add(time.Millisecond), later},
		{at, later.Add(time.Microsecond)},
		{time.Date(1850, 1, 1, 0, 0, 0, 0, time.UTC), later},
		{at, time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		_, _, exact := exactDateKeyBounds(c[0], c[1])
		assert.False(t, exact, "%s to %s", c[0], c[1])
	}
}
