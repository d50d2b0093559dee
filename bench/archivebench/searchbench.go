package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// Search benchmark settings.
const (
	goalSearchP99 = 100 * time.Millisecond
	searchLimit   = 50 // the page size of every query
	searchWarmup  = 20 // untimed queries before the timed ones
	searchTenant  = "default"
)

// searchResult is the search benchmark on one database.
type searchResult struct {
	dialect    database.Dialect
	version    string
	durability string
	messages   int
	fill       time.Duration
	queries    []benchQuery
}

// runSearchAll fills a fresh archive on every requested database and times the queries.
func runSearchAll(ctx context.Context, cfg *config, out io.Writer) error {
	syn := newSynthetic(cfg.searchAddresses)
	work, err := os.MkdirTemp(cfg.tmpDir, "archivebench-search-")
	if err != nil {
		return err
	}
	if !cfg.keep {
		defer os.RemoveAll(work)
	}
	fmt.Fprintf(out, "search: %d generated messages (%d senders/recipients over %d domains, %d-word vocabulary with Zipf(s=%.1f) frequencies, sent over %d years);\n",
		cfg.searchMessages, len(syn.addrs), domains, vocabulary, zipfS, archiveYears)
	fmt.Fprintf(out, "  filled through Archive.Prepare + Commit in batches of %d (sealed files discarded: Search reads only the database);\n", cfg.searchBatch)
	fmt.Fprintf(out, "  %d queries of each kind in random order, limit %d, one client, after %d untimed ones\n\n", cfg.searchQueries, searchLimit, searchWarmup)
	var errs []error
	for _, d := range cfg.searchDialects {
		res, err := runSearch(ctx, cfg, syn, d, work)
		if err != nil && res.version == "" {
			errs = append(errs, skipOrFail(cfg, out, d, err))
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("search %s: %w", d, err))
			continue
		}
		printSearch(out, res)
	}
	return errors.Join(errs...)
}

func runSearch(ctx context.Context, cfg *config, syn *synthetic, d database.Dialect, work string) (searchResult, error) {
	res := searchResult{dialect: d, messages: cfg.searchMessages}
	db, err := benchenv.OpenFresh(ctx, d, cfg.urls[d], work)
	if err != nil {
		return res, err
	}
	defer db.Close()
	if cfg.keep {
		db.Keep()
		fmt.Fprintf(os.Stderr, "archivebench: keeping %s\n", database.Redact(db.URL))
	}
	res.version, res.durability = db.Version, benchenv.Durability(ctx, db.DB)
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(work, "keys-"+string(d)))
	if err != nil {
		return res, err
	}
	arc, err := archive.New(db.DB, discardStore{}, keys, archive.Options{})
	if err != nil {
		return res, err
	}
	start := time.Now()
	if err := fill(ctx, cfg, syn, arc); err != nil {
		return res, fmt.Errorf("fill: %w", err)
	}
	res.fill = time.Since(start)
	res.queries = syn.queries(cfg.searchQueries)
	return res, timeQueries(ctx, arc, res.queries)
}

// fill archives the generated messages: batches are prepared on GOMAXPROCS goroutines
// while the previous batch commits.
func fill(ctx context.Context, cfg *config, syn *synthetic, arc *archive.Archive) error {
	batches := make(chan []*archive.Prepared, 1)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(batches)
		for start := 0; start < cfg.searchMessages; start += cfg.searchBatch {
			b, err := prepareBatch(syn, arc, start, min(start+cfg.searchBatch, cfg.searchMessages))
			if err != nil {
				return err
			}
			select {
			case batches <- b:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	g.Go(func() error {
		n := 0
		for b := range batches {
			results, err := arc.Commit(gctx, b)
			if err != nil {
				return err
			}
			if slices.ContainsFunc(results, func(r archive.Result) bool { return r.Duplicate }) {
				return errors.New("a generated message was taken for a duplicate")
			}
			if n++; arc.DB().Dialect == database.Postgres && n%analyzeEvery == 1 {
				if err := analyze(gctx, arc.DB()); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return err
	}
	return analyze(ctx, arc.DB())
}

// analyzeEvery is how many batches the filling of a PostgreSQL archive commits between
// two ANALYZE runs.
const analyzeEvery = 10

// analyze gathers the planner statistics of the archive's tables, as PostgreSQL's
// autovacuum would do while mail arrives (the benchmark server runs with autovacuum off:
// without it, plans made on the empty tables stay cached, and the duplicate check of
// every Commit turns into a sequential scan) and as InnoDB's automatic statistics
// recalculation does. SQLite is left as the service leaves it: it never runs ANALYZE.
func analyze(ctx context.Context, db *database.DB) error {
	var stmts []string
	switch db.Dialect {
	case database.Postgres:
		stmts = []string{"ANALYZE metadata, rcpt, attachment, message_search"}
	case database.MySQL:
		stmts = []string{"ANALYZE TABLE metadata, rcpt, attachment, search_term"}
	}
	for _, s := range stmts {
		rows, err := db.QueryContext(ctx, s) // MySQL's ANALYZE TABLE returns a result set
		if err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		rows.Close()
	}
	return nil
}

// prepareBatch prepares messages from to to-1 in parallel.
func prepareBatch(syn *synthetic, arc *archive.Archive, from, to int) ([]*archive.Prepared, error) {
	out := make([]*archive.Prepared, to-from)
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := from; i < to; i++ {
		g.Go(func() error {
			m := syn.message(i)
			p, err := arc.Prepare(archive.Incoming{Tenant: searchTenant, Raw: m.raw, Arrived: m.arrived, Source: fmt.Sprintf("generated #%d", i)})
			out[i-from] = p
			return err
		})
	}
	return out, g.Wait()
}

// timeQueries runs searchWarmup untimed queries, then every query, recording its latency,
// the number of matches and the page size.
func timeQueries(ctx context.Context, arc *archive.Archive, queries []benchQuery) error {
	for i := range min(searchWarmup, len(queries)) {
		if _, _, err := arc.Search(ctx, queries[i].archiveQuery()); err != nil {
			return err
		}
	}
	for i := range queries {
		q := &queries[i]
		start := time.Now()
		msgs, total, err := arc.Search(ctx, q.archiveQuery())
		q.latency = time.Since(start)
		if err != nil {
			return fmt.Errorf("%s query: %w", q.kind, err)
		}
		q.total, q.returned = total, len(msgs)
	}
	return nil
}

func (q benchQuery) archiveQuery() archive.Query {
	return archive.Query{Tenant: searchTenant, Text: q.text, From: q.from, To: q.to,
		DateFrom: q.dateFrom, DateTo: q.dateTo, Limit: searchLimit}
}

func printSearch(out io.Writer, r searchResult) {
	fmt.Fprintf(out, "search, %s: %s; %s\n", r.dialect, r.version, r.durability)
	fmt.Fprintf(out, "  filled %d messages in %s (%.0f msg/s, not part of the figure)\n", r.messages,
		r.fill.Round(time.Millisecond), rate(float64(r.messages), r.fill))
	fmt.Fprintf(out, "  %-18s %7s %8s %8s %8s %14s %s\n", "kind", "queries", "p50 ms", "p99 ms", "max ms", "matches p50/max", "p99 < 100 ms")
	for _, kind := range queryKinds {
		printKind(out, kind, filterKind(r.queries, kind))
	}
	printKind(out, "all", r.queries)
	fmt.Fprintln(out)
}

func printKind(out io.Writer, kind string, qs []benchQuery) {
	lat := make([]float64, len(qs))
	matches := make([]float64, len(qs))
	for i, q := range qs {
		lat[i] = float64(q.latency) / float64(time.Millisecond)
		matches[i] = float64(q.total)
	}
	slices.Sort(lat)
	slices.Sort(matches)
	p99 := percentile(lat, 0.99)
	fmt.Fprintf(out, "  %-18s %7d %8.1f %8.1f %8.1f %14s %s\n", kind, len(qs), percentile(lat, 0.5), p99, percentile(lat, 1),
		fmt.Sprintf("%.0f/%.0f", percentile(matches, 0.5), percentile(matches, 1)), benchenv.Met(p99 < float64(goalSearchP99/time.Millisecond)))
}

func filterKind(qs []benchQuery, kind string) []benchQuery {
	var out []benchQuery
	for _, q := range qs {
		if q.kind == kind {
			out = append(out, q)
		}
	}
	return out
}

// percentile returns the q-quantile of sorted values (nearest rank).
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// discardStore is a BlobStore that keeps nothing: the search benchmark needs the
// database rows only, and writing 100,000 fsynced files would only slow the filling.
type discardStore struct{}

var _ archive.BlobStore = discardStore{}

func (discardStore) Put(context.Context, string, []byte) error { return nil }

func (discardStore) Get(_ context.Context, key string) ([]byte, error) {
	return nil, fmt.Errorf("%w: %s", archive.ErrBlobNotFound, key)
}

func (discardStore) Delete(context.Context, string) error { return nil }

func (discardStore) List(context.Context, string, func(string) error) error { return nil }
