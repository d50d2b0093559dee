package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/s3store"
	"github.com/mailledger/mailledger/bench/internal/benchcorpus"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

// importTenant is the tenant of both imports (its bucket is the run's prefix + it).
const importTenant = "default"

// importResult is one import: its time (until Import returned: every file durable,
// staged in S3 mode) and, in S3 mode, the time until the last file was uploaded.
type importResult struct {
	took, uploaded time.Duration
	cpu            benchenv.CPUTime
	report         archive.ImportReport
}

// runImports imports the same corpus copies into local files and into S3 mode, each on
// a fresh database of -dialect.
func runImports(ctx context.Context, cfg *config, srv *s3server, work string, out io.Writer) error {
	seeds, _, err := benchcorpus.Load(cfg.corpus)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	msgs := benchcorpus.Copies(seeds, cfg.messages)
	src := filepath.Join(work, "src")
	if err := benchcorpus.WriteFiles(src, msgs); err != nil {
		return err
	}
	fmt.Fprintf(out, "import: %d corpus copies, %.1f MB, archive.Importer with its defaults, %s\n", len(msgs), float64(benchcorpus.Size(msgs))/1e6, cfg.dialect)
	local, err := importInto(ctx, cfg, filepath.Join(work, "local"), src, nil)
	if err != nil {
		return fmt.Errorf("import into local files: %w", err)
	}
	scfg := storeConfig(srv, filepath.Join(work, "s3", "staging"), cfg.importThreads)
	remote, err := importInto(ctx, cfg, filepath.Join(work, "s3"), src, &scfg)
	if err != nil {
		return fmt.Errorf("import into S3 mode: %w", err)
	}
	printImports(out, cfg, len(msgs), local, remote)
	return nil
}

// importInto imports src into a fresh archive under dir: local files, or the S3 store of
// scfg, whose uploads it then waits for.
func importInto(ctx context.Context, cfg *config, dir, src string, scfg *s3store.Config) (importResult, error) {
	var res importResult
	db, err := benchenv.OpenFresh(ctx, cfg.dialect, cfg.urls[cfg.dialect], filepath.Dir(dir))
	if err != nil {
		return res, err
	}
	defer db.Close()
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	if err != nil {
		return res, err
	}
	var blobs archive.BlobStore
	var store *s3store.Store
	if scfg == nil {
		blobs, err = archive.NewLocalStore(filepath.Join(dir, "store"))
	} else if store, err = s3store.New(*scfg, nil); err == nil {
		defer store.Close()
		blobs = store
	}
	if err != nil {
		return res, err
	}
	arc, err := archive.New(db.DB, blobs, keys, archive.Options{})
	if err != nil {
		return res, err
	}
	start, cpu := time.Now(), benchenv.ProcessCPU()
	res.report, err = (&archive.Importer{Archive: arc}).Import(ctx, importTenant, []string{src})
	res.took = time.Since(start)
	if err == nil && store != nil {
		err = store.WaitUploaded(ctx)
	}
	res.uploaded, res.cpu = time.Since(start), benchenv.ProcessCPU().Sub(cpu)
	if err != nil {
		return res, err
	}
	if res.report.Failed+res.report.Duplicates > 0 {
		return res, fmt.Errorf("%s; want no failure, no duplicate", res.report.Summary())
	}
	return res, nil
}
