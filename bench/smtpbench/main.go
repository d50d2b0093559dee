// Command smtpbench measures SMTP ingest (issue 12): N distinct messages made from the
// shared corpus are imported with archive.Importer (what `mailledger import` does) into a
// fresh database, the baseline, then sent by C concurrent clients over loopback to the
// real receiver (smtpd) over a second fresh database of the same dialect, each message's
// 250 awaited before the next is sent. It reports both rates, their ratio, the receiver's
// group commits and this process's CPU, and checks that every message is archived once.
// bench/run.sh (make bench) calls it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// Issue 12's goals: SMTP ingest at least half the import's rate and 500 messages/s.
const (
	goalRatio = 0.5
	goalRate  = 500
)

// config holds the command's flags.
type config struct {
	dialects   []database.Dialect
	urls       map[database.Dialect]string
	corpus     string
	messages   int
	clients    int
	tmpDir     string
	cpuProfile string
	strict     bool
	keepFiles  bool
	client     string
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{urls: benchenv.ServerURLs()}
	fs := flag.NewFlagSet("smtpbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var dialects, pg string
	fs.StringVar(&dialects, "dialects", "sqlite,postgres", "databases (sqlite, postgres, mysql)")
	fs.StringVar(&pg, "postgres", c.urls[database.Postgres], "PostgreSQL admin URL (fresh databases are created on it)")
	fs.StringVar(&c.corpus, "corpus", benchenv.EnvOr("MAILLEDGER_CORPUS", filepath.Join("..", "shared", "corpus")), "the shared corpus, read in place")
	fs.IntVar(&c.messages, "messages", 2000, "distinct messages (copies of the corpus files), imported and sent")
	fs.IntVar(&c.clients, "clients", 8, "concurrent SMTP clients, one connection each (the receiver takes 50 from one address)")
	fs.StringVar(&c.tmpDir, "tmpdir", os.TempDir(), "directory for the message files, the stores and the SQLite files")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.StringVar(&c.client, "client", clientGoSMTP, "how the clients send: go-smtp (go-smtp's client: a reply awaited per command, dot-stuffing while sending) or pipelined (as Postfix does: MAIL, RCPT and DATA in one write, the message dot-stuffed before the run)")
	fs.BoolVar(&c.keepFiles, "keep-files", false, benchenv.KeepFilesUsage)
	fs.BoolVar(&c.strict, "strict", os.Getenv("CI") == "true", "fail instead of skipping an unreachable server")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.urls[database.Postgres] = pg
	var errs []error
	var err error
	if c.dialects, err = benchenv.ParseDialects(dialects); err != nil {
		errs = append(errs, fmt.Errorf("-dialects: %w", err))
	}
	if c.client != clientPipelined && c.client != clientGoSMTP {
		errs = append(errs, fmt.Errorf("-client %q: want %s or %s", c.client, clientPipelined, clientGoSMTP))
	}
	if c.messages < 1 || c.clients < 1 {
		errs = append(errs, errors.New("-messages and -clients must be at least 1"))
	}
	return c, errors.Join(errs...)
}

func main() { benchenv.Main("smtpbench", parseFlags, run) }

func run(ctx context.Context, cfg *config, out io.Writer) error {
	stopProfile, err := benchenv.StartCPUProfile(cfg.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	fmt.Fprintf(out, "smtpbench\nmachine: %s\n", benchenv.Machine())
	w, err := newWorkload(cfg, out)
	if err != nil {
		return err
	}
	defer w.remove(cfg.keepFiles, out)
	var errs []error
	for _, d := range cfg.dialects {
		res, err := runDialect(ctx, cfg, d, w)
		switch {
		case err != nil && res.version == "":
			errs = append(errs, skipOrFail(cfg, out, d, err))
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", d, err))
		default:
			printResult(out, res)
		}
	}
	fmt.Fprintf(out, "load average at the end: %s\n", benchenv.LoadAverage())
	return errors.Join(errs...)
}

// skipOrFail reports a database that could not be created: SKIP unless -strict.
func skipOrFail(cfg *config, out io.Writer, d database.Dialect, err error) error {
	if cfg.strict {
		return fmt.Errorf("%s: %w", d, err)
	}
	fmt.Fprintf(out, "SKIP %s: %v\n\n", d, err)
	return nil
}
