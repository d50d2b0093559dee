package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchcorpus"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

// workload is the run's messages: in memory for the SMTP clients and as files for the
// import, the same bytes.
type workload struct {
	work  string // the run's temporary directory
	src   string // the message files
	msgs  [][]byte
	bytes int64
}

func newWorkload(cfg *config, out io.Writer) (*workload, error) {
	seeds, skipped, err := benchcorpus.Load(cfg.corpus)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	work, err := os.MkdirTemp(cfg.tmpDir, "smtpbench-")
	if err != nil {
		return nil, err
	}
	w := &workload{work: work, src: filepath.Join(work, "src"), msgs: benchcorpus.Copies(seeds, cfg.messages)}
	w.bytes = benchcorpus.Size(w.msgs)
	start := time.Now()
	if err := benchcorpus.WriteFiles(w.src, w.msgs); err != nil {
		w.remove(false, out)
		return nil, err
	}
	fmt.Fprintf(out, "corpus %s: %d files accepted by the parser, %d skipped; %d distinct copies (header X-Bench-Copy: N), %.1f MB, written in %s (not timed)\n",
		cfg.corpus, len(seeds), len(skipped), len(w.msgs), float64(w.bytes)/1e6, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(out, "import: archive.Importer with its defaults (as `mailledger import`); SMTP: %d clients (%s), one connection each, every 250 awaited, STARTTLS off\n\n", cfg.clients, cfg.client)
	return w, nil
}

// remove deletes the run's files, or says where they are kept (-keep-files).
func (w *workload) remove(keep bool, out io.Writer) { benchenv.RemoveWork(w.work, keep, out) }
