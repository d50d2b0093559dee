// Package benchcorpus reads the shared corpus of real mail in place for the benchmarks
// and makes distinct copies of its messages, the same bytes for every path a benchmark
// compares (import, SMTP, object store).
package benchcorpus

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

// Seed is one corpus file that the archive's parser accepts, without the mbox "From "
// line a file may start with (an SMTP client never sends one).
type Seed struct {
	Name string
	Raw  []byte
}

// Skipped is a corpus file left out, and why.
type Skipped struct {
	Name   string
	Reason error
}

// Load reads every file under dir (README.md and hidden entries excluded, as the
// importer's directory walk does) and keeps those the parser accepts as they are and as
// distinct copies, each without a leading mbox "From " line.
func Load(dir string) ([]Seed, []Skipped, error) { return load(dir, true) }

// LoadAsIs is Load with the files' bytes as they are, mbox line included (what an import
// of the files reads).
func LoadAsIs(dir string) ([]Seed, []Skipped, error) { return load(dir, false) }

func load(dir string, stripMboxLine bool) ([]Seed, []Skipped, error) {
	paths, err := archive.SourceFiles([]string{dir})
	if err != nil {
		return nil, nil, err
	}
	parser := archive.NewParser("")
	var seeds []Seed
	var skipped []Skipped
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		rel, _ := filepath.Rel(dir, p)
		if stripMboxLine {
			raw = withoutMboxLine(raw)
		}
		if err := parsesAsIsAndCopied(parser, raw); err != nil {
			skipped = append(skipped, Skipped{Name: rel, Reason: err})
			continue
		}
		seeds = append(seeds, Seed{Name: rel, Raw: raw})
	}
	if len(seeds) == 0 {
		return nil, skipped, fmt.Errorf("no message the parser accepts under %s", dir)
	}
	return seeds, skipped, nil
}

// withoutMboxLine drops a leading "From " line.
func withoutMboxLine(raw []byte) []byte {
	if !bytes.HasPrefix(raw, []byte("From ")) {
		return raw
	}
	if i := bytes.IndexByte(raw, '\n'); i >= 0 {
		return raw[i+1:]
	}
	return raw
}

func parsesAsIsAndCopied(parser *archive.Parser, raw []byte) error {
	if _, err := parser.Parse(raw); err != nil {
		return err
	}
	if _, err := parser.Parse(benchenv.DistinctCopy(raw, 0)); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return nil
}

// Copies returns n distinct messages: copy i (from 1) of seed (i-1) mod len(seeds), with
// the header line "X-Bench-Copy: i".
func Copies(seeds []Seed, n int) [][]byte {
	out := make([][]byte, n)
	for i := range n {
		out[i] = benchenv.DistinctCopy(seeds[i%len(seeds)].Raw, i+1)
	}
	return out
}

// Size is the total size of msgs in bytes.
func Size(msgs [][]byte) int64 {
	var n int64
	for _, m := range msgs {
		n += int64(len(m))
	}
	return n
}

// WriteFiles writes msgs as files copy-NNNNNN.eml under dir, each fsynced so that no
// write-back of them runs during a timed part.
func WriteFiles(dir string, msgs [][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for i, m := range msgs {
		if err := WriteSynced(filepath.Join(dir, fmt.Sprintf("copy-%06d.eml", i+1)), m); err != nil {
			return err
		}
	}
	return nil
}

// WriteSynced creates path with data and fsyncs it.
func WriteSynced(path string, data []byte) error {
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
