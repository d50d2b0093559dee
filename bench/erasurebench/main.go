// Command erasurebench measures the GDPR erasure of issue 4: the assessment of a
// 5-address request over a large generated archive against the bare SQL count queries of
// the same run, and the execution of a request that affects 100,000 emails, both on
// SQLite and PostgreSQL. These are the figures of the "Erasure" section of
// docs/performance.md; bench/run.sh (make bench) calls it. Each run works on fresh
// databases that it creates and drops.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// config holds the command's flags.
type config struct {
	run             string
	assessDialects  []database.Dialect
	executeDialects []database.Dialect
	urls            map[database.Dialect]string
	messages        int
	addresses       int
	subject         int
	holds           int
	runs            int
	warmup          int
	execMessages    int
	execSubject     int
	eraseBatch      int
	tmpDir          string
	cpuProfile      string
	keep            bool
	strict          bool
}

func (c *config) wants(part string) bool { return strings.Contains(","+c.run+",", ","+part+",") }

// assessShape is the world of the assessment: a few of the subject's messages are
// purged or erased already, which the counts must leave out.
func (c *config) assessShape() shape {
	return shape{messages: c.messages, addresses: c.addresses, subject: c.subject, holds: c.holds, hidden: true}
}

// executeShape is the world of the execution: every message of the subject is visible.
func (c *config) executeShape() shape {
	return shape{messages: c.execMessages, addresses: c.addresses, subject: c.execSubject, holds: c.holds}
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{urls: benchenv.ServerURLs()}
	fs := flag.NewFlagSet("erasurebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var assess, execute, pg string
	fs.StringVar(&c.run, "run", "assess,execute", "which benchmarks: assess, execute or both")
	fs.StringVar(&assess, "dialects", "sqlite,postgres", "databases for the assessment (sqlite, postgres)")
	fs.StringVar(&execute, "execute-dialects", "sqlite,postgres", "databases for the execution (sqlite, postgres)")
	fs.StringVar(&pg, "postgres", c.urls[database.Postgres], "PostgreSQL admin URL (a fresh database is created on it)")
	fs.IntVar(&c.messages, "messages", 1000000, "metadata rows of the assessed archive")
	fs.IntVar(&c.addresses, "addresses", 50000, "distinct addresses the background mail is exchanged between")
	fs.IntVar(&c.subject, "subject-messages", 4000, "messages of the assessed archive that name the data subject")
	fs.IntVar(&c.holds, "holds", 100, "legal holds of the tenant (1 in 5 released; none covers the subject's mail)")
	fs.IntVar(&c.runs, "runs", 30, "timed assessments (and bare-query runs) per case")
	fs.IntVar(&c.warmup, "warmup", 3, "untimed runs of each before the timed ones")
	fs.IntVar(&c.execMessages, "execute-messages", 300000, "metadata rows (all indexed) of the archive the execution runs on")
	fs.IntVar(&c.execSubject, "execute-subject", 100000, "messages of that archive that the erasure affects")
	fs.IntVar(&c.eraseBatch, "erase-batch", 0, "EraseRequest.Batch (0: archive.DefaultEraseBatch)")
	fs.StringVar(&c.tmpDir, "tmpdir", os.TempDir(), "directory for the SQLite files")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.BoolVar(&c.keep, "keep", false, "keep the databases after the run and print their URLs")
	fs.BoolVar(&c.strict, "strict", os.Getenv("CI") == "true", "fail instead of skipping an unreachable server")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.urls[database.Postgres] = pg
	var errs []error
	var err error
	if c.assessDialects, err = parseDialects(assess); err != nil {
		errs = append(errs, fmt.Errorf("-dialects: %w", err))
	}
	if c.executeDialects, err = parseDialects(execute); err != nil {
		errs = append(errs, fmt.Errorf("-execute-dialects: %w", err))
	}
	return c, errors.Join(append(errs, c.validate())...)
}

// parseDialects accepts sqlite and postgres: the generator has no MySQL variant.
func parseDialects(list string) ([]database.Dialect, error) {
	ds, err := benchenv.ParseDialects(list)
	for _, d := range ds {
		if d == database.MySQL {
			return nil, errors.New("mysql is not supported (the bulk generator is written for sqlite and postgres)")
		}
	}
	return ds, err
}

func (c *config) validate() error {
	var errs []error
	if c.addresses < 100 || c.holds < 0 || c.runs < 1 || c.warmup < 0 || c.eraseBatch < 0 {
		errs = append(errs, errors.New("-addresses must be at least 100, -runs at least 1, -holds, -warmup and -erase-batch not negative"))
	}
	if c.subject < 1 || c.messages < 2*c.subject {
		errs = append(errs, errors.New("-subject-messages must be at least 1 and at most half of -messages"))
	}
	if c.execSubject < 1 || c.execMessages < c.execSubject {
		errs = append(errs, errors.New("-execute-subject must be at least 1 and at most -execute-messages"))
	}
	if !c.wants("assess") && !c.wants("execute") {
		errs = append(errs, fmt.Errorf("-run %q names no benchmark (assess, execute)", c.run))
	}
	return errors.Join(errs...)
}

func main() { benchenv.Main("erasurebench", parseFlags, run) }

func run(ctx context.Context, cfg *config, out io.Writer) error {
	stopProfile, err := benchenv.StartCPUProfile(cfg.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	started := time.Now()
	fmt.Fprintf(out, "erasurebench %s\nmachine: %s\n\n", started.UTC().Format(time.RFC3339), benchenv.Machine())
	var errs []error
	if cfg.wants("assess") {
		printAssessHeader(out, cfg)
		for _, d := range cfg.assessDialects {
			res, err := runAssess(ctx, cfg, d)
			errs = append(errs, reportOrSkip(cfg, out, d, res.version, err, func() error { return printAssess(out, res) }))
		}
	}
	if cfg.wants("execute") {
		printExecuteHeader(out, cfg)
		for _, d := range cfg.executeDialects {
			res, err := runExecute(ctx, cfg, d)
			errs = append(errs, reportOrSkip(cfg, out, d, res.version, err, func() error { return printExecute(out, res) }))
		}
	}
	fmt.Fprintf(out, "done in %s, load average %s\n", time.Since(started).Round(time.Second), benchenv.LoadAverage())
	return errors.Join(errs...)
}

// reportOrSkip prints a result, or SKIP for a server that could not be reached (unless
// -strict), or returns the error of a run that failed.
func reportOrSkip(cfg *config, out io.Writer, d database.Dialect, version string, err error, print func() error) error {
	switch {
	case err != nil && version == "" && !cfg.strict:
		fmt.Fprintf(out, "SKIP %s: %v\n\n", d, err)
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", d, err)
	}
	return print()
}
