// Command mailledger is the email archive with a verifiable compliance ledger: the
// service (serve) and its operator commands (docs/operations.md).
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
  serve                  run the service: HTTP API on HTTP_ADDR, SMTP receiver on SMTP_ADDR,
                         background workers
  migrate                apply the database schema to DATABASE_URL and exit
  import [--tenant T] PATH...
                         archive .eml files, directories, maildirs and mbox files;
                         exit 1 if any file failed (each named on stderr)
  user add --username U --password P --role admin|auditor|user [--email E] [--domain D]
                         create a user (exit 1 if the name is taken)
  verify                 re-hash the whole ledger; exit 1 naming the first bad position
  projections rebuild    empty every projection table and replay the ledger into it
  purge                  one purge pass: delete the files of mail past retention (erased
                         mail included) that no legal hold keeps, record it in the ledger
  reindex                re-read every stored message and rebuild its search terms, address
                         roles and date (after an upgrade that says so); resumable
  erasures reapply       apply every completed erasure again, after a restore from a backup
  verify-certificate FILE --public-key KEY [--origin O]
                         check an erasure certificate bundle offline (no database)
  pdfservice [--addr A]  a PDF service for the certificates (Gotenberg's route) over the local chromium
  help [COMMAND]         show this text, or a command's usage (also: COMMAND --help)

configuration (environment; docs/operations.md says more about each):
  MAILLEDGER_DATA_DIR            ./data
  DATABASE_URL                   sqlite://$MAILLEDGER_DATA_DIR/mailledger.db (also postgres://…, mysql://…)
  HTTP_ADDR                      127.0.0.1:8080 (the API under /api/v1, the web console under /)
  CONSOLE_SESSION_IDLE           a web console session unused this long ends, at most 24h (30m)
  HTTP_MAX_CONNECTIONS           connections served at once (1024)
  HTTP_READ_HEADER_TIMEOUT, HTTP_BODY_TIMEOUT, HTTP_WRITE_TIMEOUT, HTTP_DOWNLOAD_WRITE_TIMEOUT,
  HTTP_IDLE_TIMEOUT              per-request time limits (10s, 30s, 60s, 60s per write, 2m)
  SMTP_ADDR                      the SMTP receiver (127.0.0.1:2525; SMTP_* limits, STARTTLS and
                                 tenants by domain: docs/operations.md, "Receiving mail over SMTP")
  METRICS_ADDR                   serve /metrics on this separate address (unset: not served)
  METRICS_TOKEN                  bearer token that /metrics requires; also serves it on HTTP_ADDR (unset)
  MAILLEDGER_BOOTSTRAP_ADMIN     user:password of an administrator created at start if absent
  MAILLEDGER_BOOTSTRAP_AUDITOR   user:password of an auditor created at start if absent
  MULTITENANCY                   0: everyone works in tenant "default"; 1: a user's domain is the tenant (0)
  MAILLEDGER_RETENTION_DAYS      how long archived mail is kept (3650)
  SMARTHOST_ADDR                 host:port of the relay that restores mail to a mailbox (unset: no restores)
  SMARTHOST_STARTTLS             opportunistic, required or off (opportunistic)
  SMARTHOST_CA_FILE, SMARTHOST_USER, SMARTHOST_PASSWORD, SMARTHOST_FROM, SMARTHOST_TIMEOUT
  SPAM_HEADER_LINE               the header line ("Name: value") that marks spam (unset)
  SPAM_POLICY                    keep: archive spam, marked; discard: accept it, store nothing (keep)
  SPAM_RETENTION_DAYS            how long kept spam is retained (MAILLEDGER_RETENTION_DAYS)
  MAILLEDGER_LEDGER_KEY_FILE     checkpoint signing key (default $MAILLEDGER_DATA_DIR/keys/ledger.key, created)
  MAILLEDGER_LEDGER_ORIGIN       checkpoint origin and new key name (mailledger)
  MAILLEDGER_CHECKPOINT_EVERY    sign a checkpoint after this many events (1000)
  MAILLEDGER_CHECKPOINT_INTERVAL ... or at least this often (60s)
  LOG_LEVEL                      debug, info, warn or error (info)
  GDPR_DISTINCT_APPROVER         1: an erasure request's creator may not approve it; 0: may (1)
  PDFSERVICE_URL                 Gotenberg-compatible PDF service for certificates (unset: PDF answers 503)
  MAILLEDGER_PURGE_INTERVAL      serve's purge schedule, e.g. 1h; 0 turns it off (1h)
  DIR_EXPORT                     root of the eDiscovery productions ($MAILLEDGER_DATA_DIR/export)
  EDISCOVERY_MAX_GLOBAL_EXPORTS  exports running at once in all tenants (3)
  EDISCOVERY_MAX_TENANT_EXPORTS  exports running at once in one tenant (1)
  EDISCOVERY_WORKERS             cap of an export's workers, 1 to 32 (4)
  S3_HOSTNAME                    host:port of an S3 object store for the message files (unset: local files)
  S3_ACCESS_KEY, S3_SECRET_KEY, S3_DIR (staging), S3_REGION, S3_BUCKET_PREFIX, S3_USE_SUBDIRS,
  S3_SECURE, S3_THREADS          the object store's settings (docs/operations.md, "Object storage (S3)")
`

// exitError carries the exit code of a failed command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// errSilent ends a command with its exit code and no message: the command has already
// said everything (import's summary line).
var errSilent = errors.New("")

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
	if len(args) > 0 && args[0] == "verify-certificate" { // offline: no configuration, no database
		return verifyCertificateCommand(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "pdfservice" { // no configuration, no database
		return pdfserviceCommand(ctx, args[1:], stdout, stderr)
	}
	err := dispatch(ctx, args, getenv, stdout, stderr)
	if err == nil {
		return 0
	}
	code := exitFailure
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if !errors.Is(err, errSilent) {
		fmt.Fprintln(stderr, "mailledger: "+oneLine(err))
	}
	return code
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError(errors.New("no command given"))
	}
	env := &environment{getenv: getenv, stdout: stdout, stderr: stderr}
	cmd, rest := args[0], args[1:]
	if isHelpFlag(cmd) || cmd == "help" {
		return env.printHelp(helpWords(rest))
	}
	if helpFor(cmd) == nil {
		return unknownCommand(cmd, args[:1])
	}
	if len(rest) > 0 && isHelpFlag(rest[0]) {
		fmt.Fprint(stdout, helpFor(cmd).usage)
		return nil
	}
	switch cmd {
	case "serve":
		return env.noArgs(ctx, cmd, rest, env.serve)
	case "migrate":
		return env.noArgs(ctx, cmd, rest, env.migrate)
	case "import":
		return env.importMail(ctx, rest)
	case "user":
		return env.userCommand(ctx, rest)
	case "verify":
		return env.noArgs(ctx, cmd, rest, env.verify)
	case "purge":
		return env.noArgs(ctx, cmd, rest, env.purge)
	case "reindex":
		return env.noArgs(ctx, cmd, rest, env.reindex)
	case "projections":
		return env.projectionsCommand(ctx, rest)
	case "erasures":
		return env.erasuresCommand(ctx, rest)
	}
	return unknownCommand(cmd, args[:1])
}

// helpWords is what `help` was asked about: its arguments without help flags.
func helpWords(args []string) []string {
	var words []string
	for _, a := range args {
		if !isHelpFlag(a) {
			words = append(words, a)
		}
	}
	return words
}

// projectionsCommand runs `mailledger projections rebuild`.
func (env *environment) projectionsCommand(ctx context.Context, args []string) error {
	switch {
	case len(args) == 0:
		return usageError(errors.New(projectionsUsage))
	case args[0] != "rebuild":
		return unknownCommand("projections "+args[0], []string{"projections", args[0]})
	case len(args) > 1 && isHelpFlag(args[1]):
		fmt.Fprint(env.stdout, helpFor("projections", "rebuild").usage)
		return nil
	}
	return env.noArgs(ctx, "projections rebuild", args[1:], env.rebuildProjections)
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
