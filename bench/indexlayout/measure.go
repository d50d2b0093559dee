package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// layoutResult is what was measured of one layout.
type layoutResult struct {
	name    string
	insert  time.Duration // all batches, the transactions only
	upkeep  time.Duration // after the fill, untimed in the insert figure
	sizes   []sizeFigure
	latency map[latencyKey][]time.Duration
}

// latencyKey names the latencies of one query kind in one intersection form ("" for a
// query of one term or prefix, or a layout with one form).
type latencyKey struct{ kind, form string }

// bench is one database's two layouts, each in a fresh database of its own.
type bench struct {
	dialect database.Dialect
	layouts [2]layout
	dbs     [2]*benchenv.FreshDB
	results [2]*layoutResult
	wrong   *wrongAnswers
	// excluded counts by kind the queries left out of the latencies (see timeQueries).
	excluded map[string]int
}

// fill inserts the first n messages into both layouts, batch messages to a transaction,
// timing the transactions only. The layouts take turns at going first, so that a change
// of the machine's load falls on both alike.
func (b *bench) fill(ctx context.Context, c *corpus, n, batch int, progress io.Writer) error {
	for k, start := 0, 0; start < n; k, start = k+1, start+batch {
		msgs := c.batch(start, min(start+batch, n))
		for _, j := range turn(k) {
			began := time.Now()
			err := b.dbs[j].InTx(ctx, func(tx *database.Tx) error { return b.layouts[j].insert(ctx, tx, msgs) })
			b.results[j].insert += time.Since(began)
			if err != nil {
				return fmt.Errorf("%s: %w", b.layouts[j].name(), err)
			}
		}
		if done := start + len(msgs); done%(n/10+1) < batch || done == n {
			fmt.Fprintf(progress, "indexlayout: %s: %d of %d messages in both layouts\n", b.dialect, done, n)
		}
	}
	return nil
}

// turn is the order of the two layouts in round k.
func turn(k int) []int {
	if k%2 == 0 {
		return []int{0, 1}
	}
	return []int{1, 0}
}

// settle runs each layout's upkeep and measures its size.
func (b *bench) settle(ctx context.Context) error {
	for j, l := range b.layouts {
		began := time.Now()
		for _, stmt := range l.upkeep() {
			rows, err := b.dbs[j].QueryContext(ctx, stmt) // ANALYZE TABLE returns a result set
			if err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
			rows.Close()
		}
		b.results[j].upkeep = time.Since(began)
		sizes, err := l.sizes(ctx, b.dbs[j].DB)
		if err != nil {
			return fmt.Errorf("%s size: %w", l.name(), err)
		}
		b.results[j].sizes = sizes
	}
	return nil
}

// timeQueries runs the first warmup queries untimed, then every query on both layouts
// (taking turns at going first) in each of their intersection forms, and checks every
// answer against want (per layout, per query). A query whose right answers differ on the
// two layouts (one that InnoDB FULLTEXT cannot answer) is left out of both layouts'
// latencies and counted in b.excluded: the figures compare the same work.
func (b *bench) timeQueries(ctx context.Context, queries []benchQuery, want [2][][]int64, warmup int) error {
	for pass, list := range [][]benchQuery{queries[:min(warmup, len(queries))], queries} {
		for k, bq := range list {
			timed := pass == 1 && slices.Equal(want[0][k], want[1][k])
			if pass == 1 && !timed {
				b.excluded[bq.kind]++
			}
			for _, j := range turn(k) {
				if err := b.runQuery(ctx, j, bq, want[j][k], timed); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// runQuery runs bq on layout j in each of its forms, records the latencies when timed and
// the answers that differ from want.
func (b *bench) runQuery(ctx context.Context, j int, bq benchQuery, want []int64, timed bool) error {
	forms := b.layouts[j].forms()
	if len(bq.q.Terms)+len(bq.q.Prefixes) == 1 {
		forms = forms[:1]
	}
	for _, form := range forms {
		sql, args := b.layouts[j].query(bq.q, form)
		ids, took, err := selectIDs(ctx, b.dbs[j].DB, sql, args)
		if err != nil {
			return fmt.Errorf("%s, %s query %q: %w", b.layouts[j].name(), bq.kind, bq, err)
		}
		b.wrong.check(b.layouts[j].name()+" "+form, bq, ids, want)
		if timed {
			key := latencyKey{bq.kind, form}
			if len(forms) == 1 {
				key.form = ""
			}
			b.results[j].latency[key] = append(b.results[j].latency[key], took)
		}
	}
	return nil
}

// selectIDs runs a query of ids and returns them sorted, and the time from sending the
// query to having read its last row.
func selectIDs(ctx context.Context, db *database.DB, sql string, args []any) ([]int64, time.Duration, error) {
	began := time.Now()
	rows, err := db.QueryContext(ctx, db.Rebind(sql), args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, 0, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	took := time.Since(began)
	slices.Sort(ids)
	return ids, took, nil
}

// wrongAnswers collects the answers that differ from what the generator says.
type wrongAnswers struct {
	n     int
	shown []string
}

const maxShownWrong = 10

func (w *wrongAnswers) check(who string, bq benchQuery, got, want []int64) {
	if slices.Equal(got, want) {
		return
	}
	w.n++
	if len(w.shown) < maxShownWrong {
		w.shown = append(w.shown, fmt.Sprintf("%s, %s query %q: %d ids, want %d (first missing %v, first extra %v)",
			who, bq.kind, bq, len(got), len(want), firstNotIn(want, got), firstNotIn(got, want)))
	}
}

// firstNotIn returns up to three ids of a that b lacks (both ascending).
func firstNotIn(a, b []int64) []int64 {
	var out []int64
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found && len(out) < 3 {
			out = append(out, x)
		}
	}
	return out
}
