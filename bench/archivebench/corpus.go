package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mailledger/mailledger/archive"
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
	paths, err := corpusFiles(dir)
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
	if _, err := parser.Parse(distinctCopy(raw, 0)); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return nil
}

func corpusFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !strings.EqualFold(d.Name(), "README.md") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// distinctCopy returns raw with the header line "X-Bench-Copy: n" in front of its header
// (after the mbox "From " line a file may start with), ended like the file's first line.
// The rest of the bytes are unchanged, so copies differ only in that line.
func distinctCopy(raw []byte, n int) []byte {
	at := 0
	if bytes.HasPrefix(raw, []byte("From ")) {
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			at = i + 1
		}
	}
	eol := "\n"
	if i := bytes.IndexByte(raw[at:], '\n'); i > 0 && raw[at+i-1] == '\r' {
		eol = "\r\n"
	}
	line := fmt.Sprintf("X-Bench-Copy: %d%s", n, eol)
	out := make([]byte, 0, len(raw)+len(line))
	out = append(out, raw[:at]...)
	out = append(out, line...)
	return append(out, raw[at:]...)
}

// replicate writes n distinct copies of the seeds (copy i of seed i mod len(seeds)) as
// files under dir, each fsynced so that no write-back of them runs during the timed
// parts. It returns the files and their total size.
func replicate(seeds []seed, n int, dir string) ([]string, int64, error) {
	files := make([]string, n)
	var total int64
	for i := range n {
		data := distinctCopy(seeds[i%len(seeds)].raw, i+1)
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
