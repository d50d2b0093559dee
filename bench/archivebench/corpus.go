package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

// seed is one corpus file that the parser accepts; the imported messages are copies of it.
type seed struct {
	name string
	raw  []byte
}

// skippedFile is a corpus file left out of the replication, and why.
type skippedFile struct {
	name   string
	reason error
}

// loadCorpus reads every file under dir (README.md and hidden entries excluded, as the
// importer's directory walk does) and keeps those that the archive's parser accepts, as
// they are and as distinct copies.
func loadCorpus(dir string) ([]seed, []skippedFile, error) {
	paths, err := archive.SourceFiles([]string{dir})
	if err != nil {
		return nil, nil, err
	}
	parser := archive.NewParser("")
	var seeds []seed
	var skipped []skippedFile
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		rel, _ := filepath.Rel(dir, p)
		if err := parsesAsIsAndCopied(parser, raw); err != nil {
			skipped = append(skipped, skippedFile{name: rel, reason: err})
			continue
		}
		seeds = append(seeds, seed{name: rel, raw: raw})
	}
	if len(seeds) == 0 {
		return nil, skipped, fmt.Errorf("no message the parser accepts under %s", dir)
	}
	return seeds, skipped, nil
}

// parsesAsIsAndCopied checks that the parser accepts the file as it is (the header line
// would make any text look like a message) and a distinct copy of it.
func parsesAsIsAndCopied(parser *archive.Parser, raw []byte) error {
	if _, err := parser.Parse(raw); err != nil {
		return err
	}
	if _, err := parser.Parse(benchenv.DistinctCopy(raw, 0)); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return nil
}

// replicate writes n distinct copies of the seeds (copy i of seed i mod len(seeds)) as
// files under dir, each fsynced so that no write-back of them runs during the timed
// parts. It returns the files and their total size.
func replicate(seeds []seed, n int, dir string) ([]string, int64, error) {
	files := make([]string, n)
	var total int64
	for i := range n {
		data := benchenv.DistinctCopy(seeds[i%len(seeds)].raw, i+1)
		files[i] = filepath.Join(dir, fmt.Sprintf("copy-%06d.eml", i+1))
		if err := writeSynced(files[i], data); err != nil {
			return nil, 0, err
		}
		total += int64(len(data))
	}
	return files, total, nil
}

// writeSynced creates path with data and fsyncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
