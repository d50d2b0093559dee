package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
)

// reindex re-reads every stored message and rebuilds its search terms, address roles and
// date (archive.Reindex), with a progress bar, and records the completed run in the
// ledger. It can run while serve runs: search and erasure go on meanwhile. Killed, it
// resumes where it stopped when run again. It prints "reindexed N messages, F could not
// be read"; a message that cannot be read is named on stderr and left as it was (exit 1
// at the end).
func (env *environment) reindex(ctx context.Context) error {
	o, closeAll, err := env.open(ctx, migrated|withArchive|withLedger)
	if err != nil {
		return err
	}
	defer closeAll()
	r, err := app.NewReindexer(o.store, o.arc, app.ReindexerConfig{})
	if err != nil {
		return err
	}
	bar := env.newProgress("reindexing", "messages")
	var failures atomic.Int64
	res, err := r.Run(ctx, archive.ReindexOptions{
		Progress: bar.update,
		OnFailure: func(id int64, err error) {
			if failures.Add(1) <= maxReindexFailuresShown {
				fmt.Fprintf(env.stderr, "message %d: %s\n", id, oneLine(err))
			}
		},
	})
	bar.finish()
	if err != nil {
		return fmt.Errorf("%w (the run resumes where it stopped when started again)", err)
	}
	fmt.Fprintln(env.stdout, reindexSummary(res))
	if res.Failed > 0 {
		return &exitError{code: exitFailure, err: errSilent}
	}
	return nil
}

// maxReindexFailuresShown bounds the messages named on stderr; the summary counts them all.
const maxReindexFailuresShown = 100

// reindexSummary is the one line that reports a run.
func reindexSummary(res archive.ReindexResult) string {
	s := fmt.Sprintf("reindexed %d messages, %d could not be read", res.Messages, res.Failed)
	if res.Resumed {
		s += " (resumed an interrupted run)"
	}
	return s
}
