package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// dialectResult is the benchmark on one database.
type dialectResult struct {
	dialect  database.Dialect
	version  string
	settings string
	bench    *bench
	loss     *lossReport // MariaDB only
}

func layoutsOf(cfg *config, d database.Dialect) [2]layout {
	switch d {
	case database.Postgres:
		return postgresLayouts(cfg.pgAlternative)
	case database.MySQL:
		return mysqlLayouts(cfg.myAlternative)
	}
	return sqliteLayouts()
}

// runDialect measures both layouts of database d: version stays empty when the first
// database could not be created (the server is unreachable).
func runDialect(ctx context.Context, cfg *config, sh *shared, d database.Dialect, progress io.Writer) (*dialectResult, error) {
	res := &dialectResult{dialect: d}
	b := &bench{dialect: d, layouts: layoutsOf(cfg, d), wrong: &wrongAnswers{}, excluded: map[string]int{}}
	res.bench = b
	defer b.close()
	if err := b.open(ctx, cfg, d); err != nil {
		return res, err
	}
	res.version, res.settings = b.dbs[0].Version, settingsOf(ctx, b.dbs[0].DB)
	want := [2][][]int64{sh.exact, sh.exact}
	var probes []benchQuery
	var probeWant [2][][]int64
	if d == database.MySQL && cfg.myAlternative == myFulltext {
		rules, err := readFTRules(ctx, b.dbs[1].DB)
		if err != nil {
			return res, err
		}
		res.settings += "; " + rules.String()
		probes = unindexedWords(sh.stats.df, rules, cfg.probes)
		want, probeWant, res.loss = fulltextAnswers(cfg, sh, rules, probes)
	}
	began := time.Now()
	if err := b.fill(ctx, sh.c, cfg.messages, cfg.batch, progress); err != nil {
		return res, err
	}
	fmt.Fprintf(progress, "indexlayout: %s: filled in %s\n", d, time.Since(began).Round(time.Second))
	if err := b.settle(ctx); err != nil {
		return res, err
	}
	if err := b.timeQueries(ctx, sh.queries, want, cfg.warmup); err != nil {
		return res, err
	}
	return res, b.timeQueries(ctx, probes, probeWant, 0) // checked only: their latencies are not reported
}

// open creates the two fresh databases and the layouts' tables.
func (b *bench) open(ctx context.Context, cfg *config, d database.Dialect) error {
	for j, l := range b.layouts {
		db, err := benchenv.OpenEmpty(ctx, d, cfg.urls[d], cfg.tmpDir)
		if err != nil {
			return err
		}
		b.dbs[j] = db
		if cfg.keep {
			db.Keep()
			fmt.Fprintf(os.Stderr, "indexlayout: keeping %s (%s)\n", database.Redact(db.URL), l.name())
		}
		for _, stmt := range l.schema() {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("%s schema: %w", l.name(), err)
			}
		}
		b.results[j] = &layoutResult{name: l.name(), latency: map[latencyKey][]time.Duration{}}
	}
	return nil
}

// close closes the databases and drops them, unless -keep.
func (b *bench) close() {
	for _, db := range b.dbs {
		if db != nil {
			db.Close()
		}
	}
}

// settingsOf describes the settings of the server the figures depend on.
func settingsOf(ctx context.Context, db *database.DB) string {
	s := benchenv.Durability(ctx, db)
	var extra string
	var err error
	switch db.Dialect {
	case database.Postgres:
		err = db.QueryRowContext(ctx, `SELECT 'shared_buffers=' || current_setting('shared_buffers') ||
			', work_mem=' || current_setting('work_mem') || ', autovacuum=' || current_setting('autovacuum')`).Scan(&extra)
	case database.MySQL:
		err = db.QueryRowContext(ctx, `SELECT CONCAT('innodb_buffer_pool_size=', @@innodb_buffer_pool_size DIV 1048576,
			'M, innodb_ft_cache_size=', @@innodb_ft_cache_size)`).Scan(&extra)
	default:
		return s
	}
	if err != nil {
		extra = "settings unknown (" + err.Error() + ")"
	}
	return s + ", " + extra
}

// unindexedWords returns up to limit words of the corpus that InnoDB FULLTEXT does not
// index, the most frequent first.
func unindexedWords(df wordFreq, rules ftRules, limit int) []benchQuery {
	var words []string
	for w := range df {
		if !rules.indexed(w) {
			words = append(words, w)
		}
	}
	slices.SortFunc(words, func(a, b string) int { return cmp.Or(cmp.Compare(df[b], df[a]), strings.Compare(a, b)) })
	out := make([]benchQuery, 0, min(limit, len(words)))
	for _, w := range words[:min(limit, len(words))] {
		out = append(out, benchQuery{kind: kindUnindexed, q: queryOf(w)})
	}
	return out
}
