// Command indexlayout measures, on each database, the layout of the search index that
// archive/search.go chose against its alternative, on the same generated term lists and
// the same queries: insert time, size on disk, query latency, and whether both return the
// same messages. SQLite: the FTS5 term store against a B-tree table; PostgreSQL: a
// tsvector with a GIN index against a B-tree table; MariaDB: the B-tree search_term
// against InnoDB FULLTEXT. Each layout gets a fresh database of its own, dropped after
// the run. Nothing of the archive runs: the figures are those of the index alone.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// config holds the command's flags.
type config struct {
	args       []string
	dialects   []database.Dialect
	urls       map[database.Dialect]string
	messages   int
	vocabulary int
	words      int
	zipfS      float64
	seed       uint64
	batch      int
	queries    int
	warmup     int
	probes     int
	tmpDir     string
	keep       bool
	strict     bool
	// pgAlternative is PostgreSQL's alternative layout: pgBtree or pgPositions.
	pgAlternative string
	// myAlternative is MariaDB's alternative layout: myFulltext or myIDIndex.
	myAlternative string
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{args: args, urls: benchenv.ServerURLs()}
	fs := flag.NewFlagSet("indexlayout", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var dialects, pg, my string
	fs.StringVar(&dialects, "dialects", "sqlite,postgres,mysql", "databases to measure")
	fs.StringVar(&pg, "postgres", c.urls[database.Postgres], "PostgreSQL admin URL (fresh databases are created on it)")
	fs.StringVar(&my, "mysql", c.urls[database.MySQL], "MySQL/MariaDB admin URL (fresh databases are created on it)")
	fs.StringVar(&c.pgAlternative, "postgres-alternative", pgBtree, "PostgreSQL's alternative layout: "+pgBtree+" (a term table), "+pgPositions+" (a tsvector of words with positions, pairs as <->) or "+pgBuckets+" (positions against positions and pair buckets)")
	fs.StringVar(&c.myAlternative, "mysql-alternative", myFulltext, "MariaDB's alternative layout: "+myFulltext+" (InnoDB FULLTEXT) or "+myIDIndex+" (the B-tree with an index by id instead of search_doc, as before migration 00024)")
	fs.IntVar(&c.messages, "n", 50000, "generated messages")
	fs.IntVar(&c.vocabulary, "vocabulary", 50000, "distinct words the messages are drawn from")
	fs.IntVar(&c.words, "words", 150, "words of a message, on average (subject and body)")
	fs.Float64Var(&c.zipfS, "zipf", 1.1, "Zipf exponent of the word frequencies (above 1)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the vocabulary, the messages and the queries")
	fs.IntVar(&c.batch, "batch", 200, "messages per insert transaction")
	fs.IntVar(&c.queries, "queries", 200, "timed queries of each kind")
	fs.IntVar(&c.warmup, "warmup", 20, "untimed queries before the timed ones")
	fs.IntVar(&c.probes, "probes", 50, "MariaDB: words FULLTEXT cannot index, most frequent first, checked on both layouts (untimed)")
	fs.StringVar(&c.tmpDir, "tmpdir", os.TempDir(), "directory for the SQLite files")
	fs.BoolVar(&c.keep, "keep", false, "keep the databases (and SQLite files) after the run, and print their URLs")
	fs.BoolVar(&c.strict, "strict", os.Getenv("CI") == "true", "fail instead of skipping an unreachable server")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.urls[database.Postgres], c.urls[database.MySQL] = pg, my
	var errs []error
	var err error
	if c.dialects, err = benchenv.ParseDialects(dialects); err != nil {
		errs = append(errs, fmt.Errorf("-dialects: %w", err))
	}
	if c.messages < 1 || c.batch < 1 || c.queries < 1 || c.warmup < 0 || c.probes < 0 {
		errs = append(errs, errors.New("-n, -batch and -queries must be at least 1, -warmup and -probes at least 0"))
	}
	if !slices.Contains([]string{pgBtree, pgPositions, pgBuckets}, c.pgAlternative) {
		errs = append(errs, fmt.Errorf("-postgres-alternative: %q, want %s, %s or %s", c.pgAlternative, pgBtree, pgPositions, pgBuckets))
	}
	if !slices.Contains([]string{myFulltext, myIDIndex}, c.myAlternative) {
		errs = append(errs, fmt.Errorf("-mysql-alternative: %q, want %s or %s", c.myAlternative, myFulltext, myIDIndex))
	}
	if c.vocabulary < 2 || c.words < 2 || c.zipfS <= 1 {
		errs = append(errs, errors.New("-vocabulary and -words must be at least 2, -zipf above 1"))
	}
	return c, errors.Join(errs...)
}

func main() { benchenv.Main("indexlayout", parseFlags, run) }

// shared is what every database is measured on: the corpus, its word statistics, the
// queries and their exact answers.
type shared struct {
	c       *corpus
	stats   corpusStats
	queries []benchQuery
	exact   [][]int64
}

func run(ctx context.Context, cfg *config, out io.Writer) error {
	started := time.Now()
	fmt.Fprintf(out, "indexlayout %s\ncommand: %s\nmachine: %s\n", started.UTC().Format(time.RFC3339),
		commandLine(cfg.args), benchenv.Machine())
	sh := prepare(cfg)
	printCorpus(out, cfg, sh)
	var errs []error
	for _, d := range cfg.dialects {
		res, err := runDialect(ctx, cfg, sh, d, os.Stderr)
		if err != nil && res.version == "" {
			errs = append(errs, skipOrFail(cfg, out, d, err))
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d, err))
			continue
		}
		printDialect(out, cfg, sh, res)
		if res.bench.wrong.n > 0 {
			errs = append(errs, fmt.Errorf("%s: %d wrong answers (see WRONG above)", d, res.bench.wrong.n))
		}
	}
	fmt.Fprintf(out, "done in %s, load average %s\n", time.Since(started).Round(time.Second), benchenv.LoadAverage())
	return errors.Join(errs...)
}

// prepare generates the statistics, draws the queries and computes their answers.
func prepare(cfg *config) *shared {
	sh := &shared{c: newCorpus(cfg.seed, cfg.vocabulary, cfg.zipfS, cfg.words)}
	sh.stats = countWords(sh.c, cfg.messages)
	sh.queries = drawQueries(sh.c, cfg.messages, cfg.queries, cfg.seed, sh.stats.df)
	sh.exact = answers(sh.c, cfg.messages, sh.queries, nil)[0]
	return sh
}

// skipOrFail reports a database that could not be created: SKIP unless -strict.
func skipOrFail(cfg *config, out io.Writer, d database.Dialect, err error) error {
	if cfg.strict {
		return fmt.Errorf("%s: %w", d, err)
	}
	fmt.Fprintf(out, "SKIP %s: %v\n\n", d, err)
	return nil
}

// commandLine is the command as it was run, each argument quoted for a shell where it
// needs to be and any password in a URL hidden.
func commandLine(args []string) string {
	out := []string{"go run ./bench/indexlayout"}
	for _, a := range args {
		if strings.Contains(a, "://") && strings.Contains(a, "@") {
			if scheme, rest, ok := strings.Cut(a, "://"); ok {
				if user, host, ok := strings.Cut(rest, "@"); ok {
					if name, _, hasPass := strings.Cut(user, ":"); hasPass {
						a = scheme + "://" + name + ":xxxxx@" + host
					}
				}
			}
		}
		if strings.ContainsAny(a, " ?&()*;$'\"<>|") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
