package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
)

const importUsage = "usage: mailledger import [--tenant T] PATH..."

// tenantPattern is what a tenant id may look like: it names a folder of the message
// store.
var tenantPattern = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$`)

// importMail archives the .eml files, directories, maildirs and mbox files of args into
// a tenant. Each file that fails is printed on stderr as "FILE: reason"; the summary
// line goes to stdout; any failure makes the exit code 1.
func (env *environment) importMail(ctx context.Context, args []string) error {
	tenant, paths, err := env.parseImport(args)
	if err != nil || paths == nil {
		return err
	}
	o, closeAll, err := env.open(ctx, migrated|withArchive)
	if err != nil {
		return err
	}
	defer closeAll()
	bar := env.newProgress("importing", "files")
	im := &archive.Importer{Archive: o.arc, Progress: func(done, total int) { bar.update(int64(done), int64(total)) }}
	report, err := im.Import(ctx, tenant, paths)
	bar.finish()
	for _, f := range report.Failures {
		fmt.Fprintln(env.stderr, oneLine(errors.New(f.String())))
	}
	if err != nil {
		return fmt.Errorf("import stopped after %s: %w", report.Summary(), err)
	}
	fmt.Fprintln(env.stdout, report.Summary())
	if report.Failed > 0 {
		return &exitError{code: exitFailure, err: errSilent}
	}
	return nil
}

// parseImport reads `import [--tenant T] PATH...`; flags may also follow the paths. Nil
// paths with a nil error mean -h.
func (env *environment) parseImport(args []string) (string, []string, error) {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the error is returned, the usage printed below
	tenant := fs.String("tenant", app.DefaultTenant, "the tenant the mail belongs to")
	var paths []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(env.stdout, helpFor("import").usage)
				return "", nil, nil
			}
			fmt.Fprintln(env.stderr, importUsage)
			return "", nil, usageError(fmt.Errorf("import: %w", err))
		}
		if fs.NArg() == 0 {
			break
		}
		paths, args = append(paths, fs.Arg(0)), fs.Args()[1:]
	}
	if len(paths) == 0 {
		//lint:ignore ST1005 the error is the usage line, whose "PATH..." says paths may repeat
		return "", nil, usageError(errors.New(importUsage))
	}
	if !tenantPattern.MatchString(*tenant) || strings.Contains(*tenant, "..") {
		return "", nil, usageError(fmt.Errorf("import: --tenant %q must be 1 to 64 letters, digits, '.', '_' or '-'", *tenant))
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return "", nil, usageError(fmt.Errorf("import: %w", err))
		}
	}
	return *tenant, paths, nil
}
