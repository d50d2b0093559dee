// Command scalebench measures the archive at a million messages: generated mail imported
// step by step (100,000 messages a step by default) through archive.Importer on SQLite,
// PostgreSQL and MySQL/MariaDB in one run, with the import rate, CPU, database growth and
// memory of every step, the latency of eight kinds of search at one and eight clients and
// the erasure assessment of a heavy and a rare address after each step, every answer
// checked against the generator's own counts. bench/run.sh runs it when SCALEBENCH=1.
// Each run works on fresh databases and temporary directories that it creates and removes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// config holds the command's flags.
type config struct {
	args        []string // as given, for the report
	dialects    []database.Dialect
	urls        map[database.Dialect]string
	messages    int
	step        int
	searchEvery int
	queries     int
	clients     []int
	assessRuns  int
	workers     int
	committers  int
	batch       int
	tmpDir      string
	cpuProfile  string
	// stepProfiles, when set, is a folder for one CPU profile of each step's import
	// (<dialect>-step<N>.pprof): where the time of a late step goes that an early one
	// did not spend.
	stepProfiles string
	strict       bool
	keep         bool
	// inOrder dates the messages in the order they are imported (as mail arrives over
	// SMTP) instead of at random over the five years.
	inOrder bool
	// printQueries, when not 0, prints the queries scalebench asks after that step as
	// searchtime arguments and exits: a run's slow queries replayed one by one.
	printQueries int
	log          io.Writer // progress lines while the run goes (standard error)
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{args: args, urls: benchenv.ServerURLs(), log: stderr}
	fs := flag.NewFlagSet("scalebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var dialects, clients, pg, my string
	fs.IntVar(&c.messages, "messages", 1_000_000, "generated messages to import")
	fs.IntVar(&c.step, "step", 100_000, "messages per step (one mbox file, one Importer run)")
	fs.StringVar(&dialects, "dialects", "sqlite,postgres,mysql", "databases, one after the other")
	fs.IntVar(&c.searchEvery, "search-every", 1, "search and assess after every n-th step (and always after the last)")
	fs.IntVar(&c.queries, "queries", 100, "timed queries of each kind at each client count")
	fs.StringVar(&clients, "clients", "1,8", "concurrent search clients, a comma-separated list")
	fs.IntVar(&c.assessRuns, "assess-runs", 3, "timed assessments of each address (after one untimed)")
	fs.IntVar(&c.workers, "workers", 0, "archive.Importer Workers (0: its default, GOMAXPROCS)")
	fs.IntVar(&c.batch, "batch", 0, "archive.Importer BatchSize (0: its default)")
	fs.IntVar(&c.committers, "committers", 0, "archive.Importer Committers, batches committed at once (0: its default, 2 on MySQL, 1 elsewhere)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.StringVar(&c.stepProfiles, "cpuprofile-steps", "", "write a CPU profile of each step's import into this folder (<dialect>-step<N>.pprof); not with -cpuprofile")
	fs.StringVar(&c.tmpDir, "tmpdir", os.TempDir(), "directory for the mbox files, the message stores and the SQLite files")
	fs.StringVar(&pg, "postgres", c.urls[database.Postgres], "PostgreSQL admin URL (a fresh database is created on it)")
	fs.StringVar(&my, "mysql", c.urls[database.MySQL], "MySQL/MariaDB admin URL (a fresh database is created on it)")
	fs.BoolVar(&c.inOrder, "in-date-order", false, "date message i in the i-th of -messages equal slots of the five years (mail imported in date order, as over SMTP) instead of at random")
	fs.BoolVar(&c.keep, "keep", false, "leave the databases and message stores in place after the run (their places are printed)")
	fs.IntVar(&c.printQueries, "print-queries", 0, "print the queries asked after this step (from 1) as searchtime arguments, and exit")
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
	if c.clients, err = parseClients(clients); err != nil {
		errs = append(errs, fmt.Errorf("-clients: %w", err))
	}
	return c, errors.Join(append(errs, c.validate())...)
}

func (c *config) validate() error {
	var errs []error
	if c.messages < 1 || c.step < 1 || c.step > c.messages {
		errs = append(errs, errors.New("-messages and -step must be at least 1, -step at most -messages"))
	}
	if c.searchEvery < 1 || c.queries < 1 || c.assessRuns < 1 {
		errs = append(errs, errors.New("-search-every, -queries and -assess-runs must be at least 1"))
	}
	if c.cpuProfile != "" && c.stepProfiles != "" {
		errs = append(errs, errors.New("-cpuprofile and -cpuprofile-steps exclude each other (one CPU profile at a time)"))
	}
	if c.workers < 0 || c.batch < 0 || c.committers < 0 {
		errs = append(errs, errors.New("-workers, -batch and -committers must not be negative"))
	}
	return errors.Join(errs...)
}

func parseClients(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// searchAfter says whether the searches and assessments run after step k (from 0) of n.
func (c *config) searchAfter(k, n int) bool { return (k+1)%c.searchEvery == 0 || k == n-1 }

func main() { benchenv.Main("scalebench", parseFlags, run) }

func run(ctx context.Context, cfg *config, out io.Writer) error {
	if cfg.printQueries > 0 {
		printQueries(out, newGenerator(), newWordSet(), cfg.queries, cfg.printQueries)
		return nil
	}
	stopProfile, err := benchenv.StartCPUProfile(cfg.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	started := time.Now()
	fmt.Fprintf(out, "scalebench %s\nmachine: %s\ncommand: %s\n\n", started.UTC().Format(time.RFC3339), benchenv.Machine(), commandLine(cfg.args))
	work, err := os.MkdirTemp(cfg.tmpDir, "scalebench-")
	if err != nil {
		return err
	}
	if !cfg.keep {
		defer os.RemoveAll(work)
	}
	steps := filepath.Join(work, "steps")
	if err := os.Mkdir(steps, 0o700); err != nil {
		return err
	}
	g := newGenerator()
	if cfg.inOrder {
		g.inOrder = cfg.messages
	}
	c := newCorpus(g, newWordSet(), steps, cfg.step, cfg.messages)
	defer c.remove()
	printSetup(out, cfg, c)
	var errs []error
	for _, d := range cfg.dialects {
		res, err := runDialect(ctx, cfg, c, d, work)
		errs = append(errs, reportOrSkip(cfg, out, res, err))
	}
	printGenerated(out, c)
	fmt.Fprintf(out, "done in %s, load average %s\n", time.Since(started).Round(time.Second), benchenv.LoadAverage())
	return errors.Join(errs...)
}

// commandLine is the command that reproduces the run.
func commandLine(args []string) string {
	out := "go run ./bench/scalebench"
	for _, a := range args {
		if strings.ContainsAny(a, " \t'\"$&|;<>()*?") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out += " " + a
	}
	return out
}

// reportOrSkip prints a database's result (what was measured, also when the run failed
// part way), or SKIP for a server that could not be reached (unless -strict). Answers that
// disagree with the oracle fail the run.
func reportOrSkip(cfg *config, out io.Writer, res dialectResult, err error) error {
	if err != nil && res.version == "" && !cfg.strict {
		fmt.Fprintf(out, "SKIP %s: %v\n\n", res.dialect, err)
		return nil
	}
	if res.version != "" {
		printDialect(out, cfg, res)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", res.dialect, err)
	}
	if len(res.wrong) > 0 {
		return fmt.Errorf("%s: %d answers disagree with the generator", res.dialect, len(res.wrong))
	}
	return nil
}
