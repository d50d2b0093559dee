package storetest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

// testProjectionsRebuild checks that a rebuild from the log gives exactly the rows that
// the live, inline projections wrote, however the tables were damaged, and that it is
// idempotent.
func testProjectionsRebuild(t *testing.T, newDB Factory) {
	f := newFixture(t, newDB, eventstore.Options{Projectors: projections.All()})
	f.append(stream("a"), eventstore.NoStream, numbered(1, 3)...)
	f.append(eventstore.Stream{ID: "b", Type: "test_job", TenantID: "tenant-b"}, eventstore.NoStream, numbered(4, 1)...)
	f.append(stream("a"), 3, numbered(5, 2)...)
	f.grow(40)
	tables := projectionTables()
	live := f.tableRows(tables)
	require.NotEmpty(t, live["ledger_streams"], "ledger_streams rows after live appends")

	damage := []struct {
		name string
		sql  string
	}{
		{"rebuild of intact tables", ""},
		{"rebuild again", ""},
		{"rebuild of emptied tables", "DELETE FROM ledger_streams"},
		{"rebuild of drifted rows", "UPDATE ledger_streams SET version = 999, last_event_type = 'x'"},
		{"rebuild after a stray row", "INSERT INTO ledger_streams SELECT 'stray', stream_type, tenant_id, version, first_position, last_position, last_event_type, created_at, updated_at FROM ledger_streams WHERE stream_id = 'a'"},
	}
	for _, d := range damage {
		if d.sql != "" {
			f.exec(d.sql)
		}
		f.rebuild(d.name)
		assert.Equal(t, live, f.tableRows(tables), "%s: rows; want the rows of the live path", d.name)
	}
	f.append(stream("a"), 5, numbered(41, 1)...)
	f.append(stream("c"), eventstore.NoStream, numbered(42, 2)...)
	live = f.tableRows(tables)
	f.rebuild("rebuild after appends on rebuilt tables")
	assert.Equal(t, live, f.tableRows(tables), "rows after appends on rebuilt tables; want the rebuild's")
}

func projectionTables() []string {
	var out []string
	for _, p := range projections.All() {
		out = append(out, p.Tables()...)
	}
	return out
}

// rebuild runs projections.Rebuild and checks its count and progress reports.
func (f *fixture) rebuild(name string) {
	f.t.Helper()
	size := f.head().Size
	var last [2]int64
	n, err := projections.Rebuild(f.ctx, f.store, func(done, total int64) { last = [2]int64{done, total} })
	require.NoError(f.t, err, name)
	assert.Equal(f.t, size, n, "%s: events replayed", name)
	assert.Equal(f.t, [2]int64{size, size}, last, "%s: last progress (done, total)", name)
}

// tableRows reads every row of the tables, in primary-key order, as text.
func (f *fixture) tableRows(tables []string) map[string][]string {
	f.t.Helper()
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := f.db.QueryContext(f.ctx, `SELECT * FROM `+table+` ORDER BY 1`)
		require.NoError(f.t, err)
		cols, err := rows.Columns()
		require.NoError(f.t, err)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(f.t, rows.Scan(ptrs...))
			out[table] = append(out[table], rowText(cols, vals))
		}
		require.NoError(f.t, rows.Err())
		require.NoError(f.t, rows.Close())
	}
	return out
}

// rowText renders a row as "col=value" pairs, whatever types the driver returned.
func rowText(cols []string, vals []any) string {
	parts := make([]string, len(cols))
	for i, v := range vals {
		var s string
		switch v := v.(type) {
		case nil:
			s = "NULL"
		case []byte:
			s = string(v)
		case time.Time:
			s = v.UTC().Format(time.RFC3339Nano)
		case int64:
			s = strconv.FormatInt(v, 10)
		default:
			s = fmt.Sprint(v)
		}
		parts[i] = cols[i] + "=" + s
	}
	return strings.Join(parts, " ")
}
