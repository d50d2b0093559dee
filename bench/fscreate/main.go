// Command fscreate measures what creating a file costs on the file system of -dir, in
// three rounds: on a quiet file system, right after deleting as many files, and again
// after -wait. It explains the scatter of the import benchmarks on this machine (ext4
// without a journal skips inodes deleted in the last minutes when it allocates one, and
// reads their inode blocks to find out): docs/performance.md, "Creating files after
// deleting files".
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

type config struct {
	dir   string
	files int
	size  int
	wait  time.Duration
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("fscreate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dir, "dir", os.TempDir(), "a directory on the file system to measure")
	fs.IntVar(&c.files, "files", 5000, "files created in each round, 256 to a folder as the message store puts them")
	fs.IntVar(&c.size, "size", 30000, "bytes written to each file")
	fs.DurationVar(&c.wait, "wait", 5*time.Minute, "pause before the last round, after the deletions")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.files < 1 || c.size < 0 {
		return nil, fmt.Errorf("-files must be at least 1 and -size at least 0")
	}
	return c, nil
}

func main() { benchenv.Main("fscreate", parseFlags, run) }

func run(_ context.Context, cfg *config, out io.Writer) error {
	root, err := os.MkdirTemp(cfg.dir, "fscreate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	fmt.Fprintf(out, "fscreate: %d files of %d bytes a round in %s\n", cfg.files, cfg.size, root)
	data := make([]byte, cfg.size)
	if err := round(out, "quiet file system", filepath.Join(root, "a"), cfg.files, data); err != nil {
		return err
	}
	start := time.Now()
	if err := os.RemoveAll(filepath.Join(root, "a")); err != nil {
		return err
	}
	fmt.Fprintf(out, "  deleted the %d files in %s\n", cfg.files, time.Since(start).Round(time.Millisecond))
	if err := round(out, "right after the deletions", filepath.Join(root, "b"), cfg.files, data); err != nil {
		return err
	}
	fmt.Fprintf(out, "  waiting %s\n", cfg.wait)
	time.Sleep(cfg.wait)
	return round(out, "after the wait", filepath.Join(root, "c"), cfg.files, data)
}

// round creates n files under dir, 256 to a folder, each opened, written and closed (no
// fsync: the store syncs a batch at once), and prints the time and the system CPU a file.
func round(out io.Writer, name, dir string, n int, data []byte) error {
	cpu, start := benchenv.ProcessCPU(), time.Now()
	for i := range n {
		folder := filepath.Join(dir, fmt.Sprintf("%02x", i>>8))
		if i%256 == 0 {
			if err := os.MkdirAll(folder, 0o700); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(folder, fmt.Sprintf("%d.m", i)), data, 0o600); err != nil {
			return err
		}
	}
	used, took := benchenv.ProcessCPU().Sub(cpu), time.Since(start)
	fmt.Fprintf(out, "  %-26s %s, system CPU %s: %.0f µs a file\n", name+":", took.Round(time.Millisecond),
		used.Sys.Round(time.Millisecond), float64(used.Sys.Microseconds())/float64(n))
	return nil
}
