// Command testsummary runs `go test -json` with the given arguments and prints what plain
// `go test` prints (package lines, build errors, the output of failed tests), then the
// skipped tests with the line that says why, and last one line "N passed, N failed,
// N skipped" counting test functions and subtests. It exits 1 when a test or a build
// failed (or go test itself failed), else 0. `make test` runs it.
//
// Usage: testsummary [go test flags and packages]
//
// The go command is $GO when set, else "go".
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv("GO"), os.Stdout, os.Stderr))
}

// run runs goCmd test -json args and summarizes it on stdout; it returns the exit code.
func run(args []string, goCmd string, stdout, stderr io.Writer) int {
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.Command(goCmd, append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testsummary: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testsummary: %v\n", err)
		return 1
	}
	counts, skips, readErr := Summarize(pipe, stdout)
	if readErr != nil {
		io.Copy(io.Discard, pipe)
	}
	waitErr := cmd.Wait()
	return finish(counts, skips, readErr, waitErr, stdout, stderr)
}

// finish prints the skipped tests and the closing line, and returns the exit code: a
// failed go test with no failure counted (it could not list the packages, say) counts as
// one failure, so that the line never says 0 failed when the run failed.
func finish(counts Counts, skips []Skip, readErr, waitErr error, stdout, stderr io.Writer) int {
	if readErr != nil {
		fmt.Fprintf(stderr, "testsummary: %v\n", readErr)
	}
	var exit *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exit) {
		fmt.Fprintf(stderr, "testsummary: %v\n", waitErr)
	}
	if (waitErr != nil || readErr != nil) && counts.Failed == 0 {
		counts.Failed = 1
	}
	WriteSkips(stdout, skips)
	fmt.Fprintln(stdout, counts.Line())
	if counts.Failed > 0 {
		return 1
	}
	return 0
}
