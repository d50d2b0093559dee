// Command mailledger is the email archive with a verifiable compliance ledger: the
// service (serve) and its operator commands (docs/contract.md §1).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes: 0 success, 1 a failure at run time (a broken ledger, a database that does
// not answer), 2 bad usage or configuration.
const (
	exitFailure = 1
	exitUsage   = 2
)

const usage = `usage: mailledger <command> [arguments]

commands:
  serve                  run the service: HTTP API on HTTP_ADDR, background workers
  migrate                apply the database schema to DATABASE_URL and exit
  verify                 re-hash the whole ledger; exit 1 naming the first bad position
  projections rebuild    empty every projection table and replay the ledger into it
  help                   show this text

configuration (environment; docs/contract.md §1):
  MAILLEDGER_DATA_DIR            ./data
  DATABASE_URL                   sqlite://$MAILLEDGER_DATA_DIR/mailledger.db (also postgres://…, mysql://…)
  HTTP_ADDR                      127.0.0.1:8080
  MAILLEDGER_BOOTSTRAP_ADMIN     user:password of the administrator (unset: every /api/v1 call is 401)
  MAILLEDGER_LEDGER_KEY_FILE     checkpoint signing key (default $MAILLEDGER_DATA_DIR/keys/ledger.key, created)
  MAILLEDGER_LEDGER_ORIGIN       checkpoint origin and new key name (mailledger)
  MAILLEDGER_CHECKPOINT_EVERY    sign a checkpoint after this many events (1000)
  MAILLEDGER_CHECKPOINT_INTERVAL ... or at least this often (60s)
  LOG_LEVEL                      debug, info, warn or error (info)
`

// exitError carries the exit code of a failed command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError is a configuration or usage problem: exit code 2.
func usageError(err error) error { return &exitError{code: exitUsage, err: err} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run executes the command in args and returns the process exit code. Errors are printed
// as one line on stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, getenv, stdout, stderr)
	if err == nil {
		return 0
	}
	code := exitFailure
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintln(stderr, "mailledger: "+oneLine(err))
	return code
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError(errors.New("no command given"))
	}
	env := &environment{getenv: getenv, stdout: stdout, stderr: stderr}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "serve":
		return env.noArgs(ctx, cmd, rest, env.serve)
	case "migrate":
		return env.noArgs(ctx, cmd, rest, env.migrate)
	case "verify":
		return env.noArgs(ctx, cmd, rest, env.verify)
	case "projections":
		if len(rest) == 1 && rest[0] == "rebuild" {
			return env.rebuildProjections(ctx)
		}
		return usageError(errors.New("usage: mailledger projections rebuild"))
	}
	fmt.Fprint(stderr, usage)
	return usageError(fmt.Errorf("unknown command %q", args[0]))
}

// environment is what every command reads and writes.
type environment struct {
	getenv         func(string) string
	stdout, stderr io.Writer
}

// noArgs runs fn unless the command was given arguments it does not take.
func (env *environment) noArgs(ctx context.Context, name string, args []string, fn func(context.Context) error) error {
	if len(args) > 0 {
		return usageError(fmt.Errorf("%s takes no arguments, got %q", name, strings.Join(args, " ")))
	}
	return fn(ctx)
}

// oneLine joins the lines of a (possibly joined) error with "; ".
func oneLine(err error) string {
	var parts []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}
