package benchenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// Main runs a benchmark program: it parses the arguments with parse (exit 2 on a bad
// flag), runs run until it returns or SIGINT/SIGTERM arrives, and exits 1 on an error.
func Main[C any](name string, parse func(args []string, stderr io.Writer) (C, error), run func(ctx context.Context, cfg C, out io.Writer) error) {
	cfg, err := parse(os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// StartCPUProfile writes a CPU profile to path until the returned function is called; an
// empty path profiles nothing.
func StartCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
