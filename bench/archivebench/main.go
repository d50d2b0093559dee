// Command archivebench measures the archive: import throughput of the shared corpus
// replicated to many distinct messages, against a plain copy of the same files, and
// search latency over a large generated archive. These are the figures of issue 3 in
// docs/performance.md; bench/run.sh (make bench) calls it. Each run works on fresh
// databases and temporary directories that it creates and removes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// config holds the command's flags.
type config struct {
	run             string
	importDialects  []database.Dialect
	searchDialects  []database.Dialect
	urls            map[database.Dialect]string
	corpus          string
	messages        int
	workers         int
	batch           int
	copyWorkers     int
	searchMessages  int
	searchQueries   int
	searchBatch     int
	searchAddresses int
	tmpDir          string
	cpuProfile      string
	strict          bool
	keep            bool
	keepFiles       bool
	documentCache   bool
}

func (c *config) wants(part string) bool { return strings.Contains(","+c.run+",", ","+part+",") }

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{urls: benchenv.ServerURLs()}
	fs := flag.NewFlagSet("archivebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var importDialects, searchDialects, pg, my string
	fs.StringVar(&c.run, "run", "import,search", "which benchmarks: import, search or both")
	fs.StringVar(&importDialects, "dialects", "sqlite,postgres", "databases for the import benchmark")
	fs.StringVar(&searchDialects, "search-dialects", "sqlite,postgres,mysql", "databases for the search benchmark")
	fs.StringVar(&pg, "postgres", c.urls[database.Postgres], "PostgreSQL admin URL (a fresh database is created on it)")
	fs.StringVar(&my, "mysql", c.urls[database.MySQL], "MySQL/MariaDB admin URL (a fresh database is created on it)")
	fs.StringVar(&c.corpus, "corpus", benchenv.EnvOr("MAILLEDGER_CORPUS", filepath.Join("..", "shared", "corpus")), "the shared corpus, read in place")
	fs.IntVar(&c.messages, "messages", 10000, "distinct messages to import (copies of the corpus files)")
	fs.IntVar(&c.workers, "workers", 0, "archive.Importer Workers (0: its default, GOMAXPROCS)")
	fs.IntVar(&c.batch, "batch", 0, "archive.Importer BatchSize (0: its default)")
	fs.IntVar(&c.copyWorkers, "copy-workers", 0, "goroutines of the plain copy (0: as many as the importer's workers)")
	fs.IntVar(&c.searchMessages, "search-messages", 100000, "generated messages in the searched archive")
	fs.IntVar(&c.searchQueries, "search-queries", 200, "timed queries of each kind")
	fs.IntVar(&c.searchBatch, "search-batch", 1000, "messages per Commit when filling the searched archive")
	fs.IntVar(&c.searchAddresses, "search-addresses", 1000, "distinct addresses senders and recipients are drawn from")
	fs.StringVar(&c.tmpDir, "tmpdir", os.TempDir(), "directory for the message files, the store and the SQLite files")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.BoolVar(&c.keep, "keep", false, "keep the searched databases (and SQLite files) after the run, and print their URLs")
	fs.BoolVar(&c.keepFiles, "keep-files", false, benchenv.KeepFilesUsage)
	fs.BoolVar(&c.documentCache, "document-cache", true, "keep the text of PDF and office attachments by content, as the service does (false: read every copy)")
	fs.BoolVar(&c.strict, "strict", os.Getenv("CI") == "true", "fail instead of skipping an unreachable server")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.urls[database.Postgres], c.urls[database.MySQL] = pg, my
	var errs []error
	var err error
	if c.importDialects, err = benchenv.ParseDialects(importDialects); err != nil {
		errs = append(errs, fmt.Errorf("-dialects: %w", err))
	}
	if c.searchDialects, err = benchenv.ParseDialects(searchDialects); err != nil {
		errs = append(errs, fmt.Errorf("-search-dialects: %w", err))
	}
	if c.messages < 1 || c.searchMessages < 1 || c.searchQueries < 1 || c.searchBatch < 1 || c.searchAddresses < 2 {
		errs = append(errs, errors.New("-messages, -search-messages, -search-queries and -search-batch must be at least 1, -search-addresses at least 2"))
	}
	return c, errors.Join(errs...)
}

func main() { benchenv.Main("archivebench", parseFlags, run) }

func run(ctx context.Context, cfg *config, out io.Writer) error {
	stopProfile, err := benchenv.StartCPUProfile(cfg.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	started := time.Now()
	fmt.Fprintf(out, "archivebench %s\nmachine: %s\n\n", started.UTC().Format(time.RFC3339), benchenv.Machine())
	var errs []error
	if cfg.wants("import") {
		errs = append(errs, runImportAll(ctx, cfg, out))
	}
	if cfg.wants("search") {
		errs = append(errs, runSearchAll(ctx, cfg, out))
	}
	fmt.Fprintf(out, "done in %s, load average %s\n", time.Since(started).Round(time.Second), benchenv.LoadAverage())
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

func rate(n float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return n / d.Seconds()
}
