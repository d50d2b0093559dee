// Command s3bench measures the S3 object store (issue 12): for each s3_threads value, M
// sealed message files uploaded through archive/s3store (Put, then wait until uploaded)
// against a plain aws-sdk-go-v2 PutObject loop of the same objects at the same
// concurrency; and an archive.Importer import of the corpus copies into S3 mode against
// one into local files. It uses the S3 server at -endpoint, or starts versitygw over a
// temporary directory. bench/run.sh (make bench) calls it.
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

	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

// goalRatio is issue 12's goal: the store's upload throughput against the plain loop's.
const goalRatio = 0.8

// config holds the command's flags.
type config struct {
	run           string
	endpoint      string
	accessKey     string
	secretKey     string
	versitygw     string
	objects       int
	threads       []int
	messages      int
	importThreads int
	dialect       database.Dialect
	urls          map[database.Dialect]string
	corpus        string
	tmpDir        string
	cpuProfile    string
	strict        bool
	keepFiles     bool
}

func (c *config) wants(part string) bool { return strings.Contains(","+c.run+",", ","+part+",") }

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{urls: benchenv.ServerURLs()}
	fs := flag.NewFlagSet("s3bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var threads, dialect string
	fs.StringVar(&c.run, "run", "upload,import", "which benchmarks: upload, import or both")
	fs.StringVar(&c.endpoint, "endpoint", os.Getenv("TEST_S3_ENDPOINT"), "S3 server host:port (no TLS); empty: start -versitygw")
	fs.StringVar(&c.accessKey, "access-key", os.Getenv("TEST_S3_ACCESS_KEY"), "access key of -endpoint")
	fs.StringVar(&c.secretKey, "secret-key", os.Getenv("TEST_S3_SECRET_KEY"), "secret key of -endpoint")
	fs.StringVar(&c.versitygw, "versitygw", defaultVersitygw(), "versitygw binary started when -endpoint is empty")
	fs.IntVar(&c.objects, "objects", 1000, "sealed message files uploaded for each s3_threads value")
	fs.StringVar(&threads, "threads", "1,4,16", "s3_threads values (and the plain loop's goroutines)")
	fs.IntVar(&c.messages, "messages", 1000, "corpus copies imported into local files and into S3 mode")
	fs.IntVar(&c.importThreads, "import-threads", 4, "s3_threads of the S3-mode import")
	fs.StringVar(&dialect, "dialect", "sqlite", "database of both imports")
	fs.StringVar(&c.corpus, "corpus", benchenv.EnvOr("MAILLEDGER_CORPUS", filepath.Join("..", "shared", "corpus")), "the shared corpus, read in place")
	fs.StringVar(&c.tmpDir, "tmpdir", os.TempDir(), "directory for staging, stores, versitygw's data and SQLite files")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.BoolVar(&c.keepFiles, "keep-files", false, benchenv.KeepFilesUsage)
	fs.BoolVar(&c.strict, "strict", os.Getenv("CI") == "true", "fail instead of skipping when no S3 server or database is available")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var errs []error
	var err error
	if c.threads, err = parseInts(threads); err != nil {
		errs = append(errs, fmt.Errorf("-threads: %w", err))
	}
	ds, err := benchenv.ParseDialects(dialect)
	if err != nil || len(ds) != 1 {
		errs = append(errs, fmt.Errorf("-dialect: one of sqlite, postgres, mysql, got %q", dialect))
	} else {
		c.dialect = ds[0]
	}
	if c.objects < 1 || c.messages < 1 || c.importThreads < 1 {
		errs = append(errs, errors.New("-objects, -messages and -import-threads must be at least 1"))
	}
	return c, errors.Join(errs...)
}

func parseInts(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func main() { benchenv.Main("s3bench", parseFlags, run) }

func run(ctx context.Context, cfg *config, out io.Writer) error {
	stopProfile, err := benchenv.StartCPUProfile(cfg.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	fmt.Fprintf(out, "s3bench\nmachine: %s\n", benchenv.Machine())
	work, err := os.MkdirTemp(cfg.tmpDir, "s3bench-")
	if err != nil {
		return err
	}
	defer benchenv.RemoveWork(work, cfg.keepFiles, out)
	srv, err := s3Server(cfg, work, out)
	if err != nil {
		if cfg.strict {
			return err
		}
		fmt.Fprintf(out, "SKIP: %v\n", err)
		return nil
	}
	defer srv.stop()
	var errs []error
	if cfg.wants("upload") {
		errs = append(errs, runUploads(ctx, cfg, srv, work, out))
	}
	if cfg.wants("import") {
		errs = append(errs, runImports(ctx, cfg, srv, work, out))
	}
	fmt.Fprintf(out, "load average at the end: %s\n", benchenv.LoadAverage())
	return errors.Join(errs...)
}
