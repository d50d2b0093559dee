// Command ledgerbench measures the ledger against a plain INSERT of the same rows on
// SQLite, PostgreSQL and MySQL, and times Verify over a populated SQLite ledger: the
// figures of docs/performance.md. Each run works on fresh databases that it creates and
// drops; bench/run.sh (make bench) calls it.
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
	run          string
	dialects     string
	urls         map[database.Dialect]string
	singleTxs    int
	batchTxs     int
	batchSize    int
	rounds       int
	warmup       int
	streams      int
	withProj     bool
	plainIndexes bool
	verifyEvents int
	verifyBatch  int
	verifyRuns   int
	tmpDir       string
	cpuProfile   string
	strict       bool
}

// cases lists the append cases: each transaction shape through the bare ledger and, when
// -projections is set, through the ledger with the service's projectors.
func (c *config) cases() []appendCase {
	var out []appendCase
	for _, proj := range []bool{false, true} {
		if proj && !c.withProj {
			continue
		}
		out = append(out, appendCase{perTx: 1, txs: c.singleTxs, projections: proj},
			appendCase{perTx: c.batchSize, txs: c.batchTxs, projections: proj})
	}
	return out
}

func (c *config) wants(part string) bool { return strings.Contains(","+c.run+",", ","+part+",") }

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{urls: map[database.Dialect]string{}}
	fs := flag.NewFlagSet("ledgerbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var pg, my string
	fs.StringVar(&c.run, "run", "append,verify", "which benchmarks: append, verify or both")
	fs.StringVar(&c.dialects, "dialects", "sqlite,postgres,mysql", "databases for the append benchmark")
	fs.StringVar(&pg, "postgres", benchenv.EnvOr("TEST_POSTGRES_URL", benchenv.DefaultPostgresURL), "PostgreSQL admin URL (a fresh database is created on it)")
	fs.StringVar(&my, "mysql", benchenv.EnvOr("TEST_MYSQL_URL", benchenv.DefaultMySQLURL), "MySQL/MariaDB admin URL (a fresh database is created on it)")
	fs.IntVar(&c.singleTxs, "single-txs", 1000, "transactions of 1 event each")
	fs.IntVar(&c.batchTxs, "batch-txs", 100, "transactions of -batch-size events each")
	fs.IntVar(&c.batchSize, "batch-size", 100, "events per transaction in the batch case")
	fs.IntVar(&c.rounds, "rounds", 10, "rounds per case; each times the ledger, then the plain insert of the same rows")
	fs.IntVar(&c.warmup, "warmup", 50, "untimed single-event appends before measuring")
	fs.IntVar(&c.streams, "streams", 100, "streams the appends go to, round-robin")
	fs.BoolVar(&c.withProj, "projections", true, "also measure the ledger with the service's inline projectors (projections.All)")
	fs.BoolVar(&c.plainIndexes, "plain-indexes", false, "give the baseline tables the events table's secondary index (tenant_id, position) too")
	fs.IntVar(&c.verifyEvents, "verify-events", 100000, "events in the ledger that Verify checks")
	fs.IntVar(&c.verifyBatch, "verify-batch", 1000, "events per append (and per checkpoint) when populating it")
	fs.IntVar(&c.verifyRuns, "verify-runs", 3, "timed Verify passes; the median is reported")
	fs.StringVar(&c.tmpDir, "tmpdir", os.TempDir(), "directory for the SQLite files")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.BoolVar(&c.strict, "strict", os.Getenv("CI") == "true", "fail instead of skipping an unreachable server")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.urls[database.Postgres], c.urls[database.MySQL] = pg, my
	return c, c.validate()
}

func (c *config) validate() error {
	var errs []error
	if c.singleTxs < 1 || c.batchTxs < 1 || c.batchSize < 1 || c.rounds < 1 || c.streams < 1 || c.warmup < 1 {
		errs = append(errs, errors.New("-single-txs, -batch-txs, -batch-size, -rounds, -streams and -warmup must be at least 1"))
	}
	if c.verifyEvents < 1 || c.verifyBatch < 1 || c.verifyRuns < 1 {
		errs = append(errs, errors.New("-verify-events, -verify-batch and -verify-runs must be at least 1"))
	}
	if _, err := benchenv.ParseDialects(c.dialects); err != nil {
		errs = append(errs, fmt.Errorf("-dialects: %w", err))
	}
	return errors.Join(errs...)
}

func main() { benchenv.Main("ledgerbench", parseFlags, run) }

func run(ctx context.Context, cfg *config, out io.Writer) error {
	stopProfile, err := benchenv.StartCPUProfile(cfg.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	rep := &report{started: time.Now(), cfg: cfg}
	rep.header(out)
	var errs []error
	if cfg.wants("append") {
		errs = append(errs, runAppendAll(ctx, cfg, rep, out))
	}
	if cfg.wants("verify") {
		res, err := runVerify(ctx, cfg)
		if err == nil {
			rep.verify(out, res)
		}
		errs = append(errs, err)
	}
	rep.footer(out)
	return errors.Join(errs...)
}

// runAppendAll runs the append benchmark on every requested dialect, printing as it goes.
func runAppendAll(ctx context.Context, cfg *config, rep *report, out io.Writer) error {
	var errs []error
	for _, name := range strings.Split(cfg.dialects, ",") {
		d := database.Dialect(name)
		results, info, err := runAppend(ctx, cfg, d)
		if err != nil && !cfg.strict && info.version == "" {
			fmt.Fprintf(out, "SKIP %s: %v\n", d, err)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d, err))
			continue
		}
		rep.appendResults(out, info, results)
	}
	return errors.Join(errs...)
}

func rate(events int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(events) / d.Seconds()
}
