package main

import (
	"fmt"
	"path/filepath"

	"github.com/mailledger/mailledger/bench/internal/benchcorpus"
)

// loadCorpus reads the corpus under dir as the import reads its files (an mbox line
// kept): the seeds the parser accepts as they are and as distinct copies, and the files
// left out with why.
func loadCorpus(dir string) ([]benchcorpus.Seed, []benchcorpus.Skipped, error) {
	return benchcorpus.LoadAsIs(dir)
}

// replicate writes n distinct copies of the seeds (copy i of seed i mod len(seeds)) as
// files under dir, each fsynced so that no write-back of them runs during the timed
// parts. It returns the files and their total size.
func replicate(seeds []benchcorpus.Seed, n int, dir string) ([]string, int64, error) {
	msgs := benchcorpus.Copies(seeds, n)
	if err := benchcorpus.WriteFiles(dir, msgs); err != nil {
		return nil, 0, err
	}
	files := make([]string, n)
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("copy-%06d.eml", i+1))
	}
	return files, benchcorpus.Size(msgs), nil
}
