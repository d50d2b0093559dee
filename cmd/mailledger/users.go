package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"strings"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/identity"
)

// ensureBootstrapUsers creates the administrator of MAILLEDGER_BOOTSTRAP_ADMIN and the
// auditor of MAILLEDGER_BOOTSTRAP_AUDITOR (domain "local") unless users of those names
// exist; an existing user is never changed. Only user names and roles are logged.
func ensureBootstrapUsers(ctx context.Context, users *identity.Users, cfg app.Config, logger *slog.Logger) error {
	bootstrap := []struct {
		creds app.Credentials
		role  identity.Role
	}{{cfg.BootstrapAdmin, identity.RoleAdmin}, {cfg.BootstrapAuditor, identity.RoleAuditor}}
	for _, b := range bootstrap {
		if b.creds.IsZero() {
			continue
		}
		created, err := users.EnsureBootstrap(ctx, b.creds.Username, b.creds.Password, b.role)
		if err != nil {
			return fmt.Errorf("bootstrap %s %q: %w", b.role, b.creds.Username, err)
		}
		if created {
			logger.Info("created bootstrap user", "user", b.creds.Username, "role", b.role.String())
		}
	}
	return nil
}

const userAddUsage = "usage: mailledger user add --username U --password P --role admin|auditor|user [--email E] [--domain D]"

// userCommand runs `mailledger user add`.
func (env *environment) userCommand(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageError(errors.New(userAddUsage))
	}
	if args[0] != "add" {
		return unknownCommand("user "+args[0], []string{"user", args[0]})
	}
	u, password, err := env.parseUserAdd(args[1:])
	if err != nil || u == nil {
		return err
	}
	o, closeAll, err := env.open(ctx, migrated)
	if err != nil {
		return err
	}
	defer closeAll()
	if u.PasswordHash, err = identity.HashPassword(password); err != nil {
		return usageError(errors.New("--password: cannot be hashed (bcrypt takes at most 72 bytes)"))
	}
	uid, err := identity.NewUsers(o.db).Add(ctx, *u)
	if errors.Is(err, identity.ErrUserExists) {
		return fmt.Errorf("user %q already exists", u.Username)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "created user %s: uid %d, role %s, domain %s\n", u.Username, uid, u.Role, u.Domain)
	return nil
}

// parseUserAdd reads the flags of `user add`. A nil user with a nil error means -h.
func (env *environment) parseUserAdd(args []string) (*identity.User, string, error) {
	fs := flag.NewFlagSet("user add", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the error is returned, the usage printed below
	username := fs.String("username", "", "the login name (required)")
	password := fs.String("password", "", "the password, stored as a bcrypt hash (required)")
	role := fs.String("role", "", "admin, auditor or user (required)")
	email := fs.String("email", "", "the user's address: a plain user sees the mail it sent or received")
	domain := fs.String("domain", identity.LocalDomain, "the user's domain: the tenant in multi-tenant mode")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(env.stdout, helpFor("user", "add").usage)
			return nil, "", nil
		}
		fmt.Fprintln(env.stderr, userAddUsage)
		return nil, "", usageError(fmt.Errorf("user add: %w", err))
	}
	u := &identity.User{Username: strings.TrimSpace(*username), Email: strings.ToLower(strings.TrimSpace(*email)),
		Domain: strings.ToLower(strings.TrimSpace(*domain))}
	u.Realname = u.Username
	if err := checkNewUser(u, *password, *role, fs.Args()); err != nil {
		return nil, "", usageError(fmt.Errorf("user add: %w", err))
	}
	return u, *password, nil
}

// checkNewUser validates the flags of `user add`, setting u.Role, and joins every
// problem found.
func checkNewUser(u *identity.User, password, role string, extra []string) error {
	var problems []error
	bad := func(format string, a ...any) { problems = append(problems, fmt.Errorf(format, a...)) }
	if len(extra) > 0 {
		bad("unexpected arguments %q", strings.Join(extra, " "))
	}
	if u.Username == "" || len(u.Username) > 255 || strings.ContainsAny(u.Username, ": \t\r\n") {
		bad("--username is required: 1 to 255 characters, no ':' or spaces")
	}
	if password == "" {
		bad("--password is required")
	}
	var err error
	if u.Role, err = identity.ParseRole(role); err != nil {
		bad("--role: %v", err)
	}
	if u.Email != "" && !validAddress(u.Email) {
		bad("--email %q is not an email address", u.Email)
	}
	if u.Domain == "" || strings.ContainsAny(u.Domain, " \t\r\n/@") {
		bad("--domain %q is not a domain name", u.Domain)
	}
	return errors.Join(problems...)
}

func validAddress(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}
