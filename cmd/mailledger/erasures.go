package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/eventstore"
)

const erasuresUsage = "usage: mailledger erasures reapply"

// reapplyActor is who the reapplied event names when serve or the command runs it.
const reapplyActor = "system:reapply"

// erasuresCommand runs `mailledger erasures reapply`.
func (env *environment) erasuresCommand(ctx context.Context, args []string) error {
	switch {
	case len(args) == 0:
		return usageError(errors.New(erasuresUsage))
	case args[0] != "reapply":
		return unknownCommand("erasures "+args[0], []string{"erasures", args[0]})
	case len(args) > 1 && isHelpFlag(args[1]):
		fmt.Fprint(env.stdout, helpFor("erasures", "reapply").usage)
		return nil
	}
	return env.noArgs(ctx, "erasures reapply", args[1:], env.reapplyErasures)
}

// reapplyErasures applies every completed erasure of the ledger again and prints
// "reapplied N erasures: E messages erased again, F files back for the next purge".
func (env *environment) reapplyErasures(ctx context.Context) error {
	o, closeAll, err := env.open(ctx, migrated|withKey|withArchive|withLedger)
	if err != nil {
		return err
	}
	defer closeAll()
	er, err := app.NewErasure(o.store, o.arc, app.ErasureConfig{Logger: env.logger(o.cfg), Kept: keptCertificates(o.cfg, o.key)})
	if err != nil {
		return err
	}
	rep, err := er.Reapply(ctx, reapplyActor)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, reapplySummary(rep))
	return nil
}

func reapplySummary(rep *app.ReapplyReport) string {
	s := fmt.Sprintf("reapplied erasures: %d found something, %d messages erased again, %d files back for the next purge",
		len(rep.Requests), rep.Erased, rep.Files)
	fromCerts := 0
	for _, r := range rep.Requests {
		if r.FromCertificate {
			fromCerts++
		}
	}
	if fromCerts > 0 {
		s += fmt.Sprintf("; %d known only from their kept certificates", fromCerts)
	}
	for _, r := range rep.Refused {
		s += fmt.Sprintf("\nrefused kept certificate %s: %s", r.File, r.Reason)
	}
	return s
}

// keptCertificates is where serve keeps the certificate bundles (app.CertificateKeeper)
// and the key they verify with, for Reapply.
func keptCertificates(cfg app.Config, key *eventstore.Key) app.KeptCertificates {
	return app.KeptCertificates{Dir: cfg.CertificateDir(), PublicKey: key.PublicKey, Origin: cfg.LedgerOrigin}
}

// reapplyIfOlder runs Reapply at serve's start when the archive looks older than the
// ledger (app.Erasure.ArchiveLooksOlder): a restore of the archive must not bring erased
// mail back until someone thinks of running the command.
func reapplyIfOlder(ctx context.Context, er *app.Erasure, logger *slog.Logger) error {
	if er == nil {
		return nil
	}
	older, err := er.ArchiveLooksOlder(ctx)
	if err != nil || !older {
		return err
	}
	logger.Warn("the archive looks older than the ledger (a completed erasure has no message marked with its id): applying the erasures again")
	rep, err := er.Reapply(ctx, reapplyActor)
	if err != nil {
		return fmt.Errorf("reapply erasures: %w", err)
	}
	logger.Info(reapplySummary(rep))
	return nil
}
