package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/s3store"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/migrations"
	"github.com/mailledger/mailledger/projections"
)

// config reads the configuration; a problem is a usage error (exit 2). Every command
// starts here, so this is also where local state left readable to others is made private
// (secureDataDir) before any command touches it.
func (env *environment) config() (app.Config, error) {
	cfg, err := app.ConfigFromEnv(env.getenv)
	if err != nil {
		return cfg, usageError(err)
	}
	if err := secureDataDir(cfg, env.logger(cfg)); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// logger returns the JSON logger on stderr at the configured level.
func (env *environment) logger(cfg app.Config) *slog.Logger {
	return slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
}

// openDatabase opens DATABASE_URL without contacting the server. A malformed URL is a
// usage error whose text never shows the URL's password.
func openDatabase(cfg app.Config) (*database.DB, error) {
	db, err := database.Open(cfg.DatabaseURL)
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), cfg.DatabaseURL, database.Redact(cfg.DatabaseURL))
		if errors.Is(err, database.ErrBadURL) {
			return nil, usageError(fmt.Errorf("DATABASE_URL: %s", msg))
		}
		return nil, errors.New(msg)
	}
	return db, nil
}

// loadKey reads the ledger's signing key from MAILLEDGER_LEDGER_KEY_FILE, or from
// $MAILLEDGER_DATA_DIR/keys/ledger.key, creating that on first use. A key that cannot be
// read is a usage error.
func loadKey(cfg app.Config) (*eventstore.Key, error) {
	var key *eventstore.Key
	var err error
	if cfg.LedgerKeyFile != "" {
		key, err = eventstore.LoadKeyFile(cfg.LedgerKeyFile)
	} else {
		key, err = eventstore.LoadOrCreateKey(cfg.KeyDir(), cfg.LedgerOrigin)
	}
	if err != nil {
		return nil, usageError(err)
	}
	return key, nil
}

// openArchive opens the email archive on db: message files in blobs, encryption keys
// under $MAILLEDGER_DATA_DIR/keys (the first one created on first use), retention and
// spam header from the configuration. Keys that cannot be read are a usage error.
func openArchive(cfg app.Config, db *database.DB, blobs archive.BlobStore, rules *appRules) (*archive.Archive, error) {
	keys, err := archive.LoadOrCreateKeyring(cfg.KeyDir())
	if err != nil {
		return nil, usageError(err)
	}
	return archive.New(db, blobs, keys, archive.Options{Retention: cfg.Retention(), SpamHeader: cfg.SpamHeader,
		SpamRetention: cfg.SpamRetention(), DiscardSpam: cfg.DiscardSpam(), Tagger: rules.tagger, Policy: rules.retention})
}

// opened is what a command works on: the configuration, and what it asked for of the
// ledger's signing key, the database, the archive and the ledger.
type opened struct {
	cfg   app.Config
	key   *eventstore.Key
	db    *database.DB
	arc   *archive.Archive
	store *eventstore.Store
	// s3cfg is the object store's configuration (S3_*), s3 the store when it is used.
	s3cfg s3store.Config
	s3    *s3store.Store
	// rules are the tenants' header checks and retention rules that the archive applies
	// to what it stores (SIGHUP and the API make them be read again).
	rules appRules
}

// appRules are the rules of the tenants the archive applies when it stores a message.
type appRules struct {
	tagger    *app.HeaderTagger
	retention *app.RetentionPolicy
}

func newAppRules(db *database.DB, logger *slog.Logger) (appRules, error) {
	tagger, err := app.NewHeaderTagger(db, app.HeaderTaggerConfig{Logger: logger})
	if err != nil {
		return appRules{}, err
	}
	retention, err := app.NewRetentionPolicy(db, app.RetentionPolicyConfig{Logger: logger})
	return appRules{tagger: tagger, retention: retention}, err
}

// invalidate makes the rules be read again before the next message.
func (r appRules) invalidate() {
	r.tagger.Invalidate()
	r.retention.Invalidate()
}

// parts says what open opens besides the configuration and the database.
type parts int

const (
	// withKey loads the ledger's signing key, before the database is contacted.
	withKey parts = 1 << iota
	// migrated migrates the database to the current schema.
	migrated
	// withArchive opens the email archive.
	withArchive
	// withLedger opens the event store with every projection.
	withLedger
)

// open is the one start-up path of the commands but serve: the configuration, the
// signing key (withKey), the database (checked once that it answers), migrated to the
// current schema (migrated), and the archive and the ledger (withArchive, withLedger).
// The caller calls closeAll when done; on an error everything opened is closed.
func (env *environment) open(ctx context.Context, what parts) (o *opened, closeAll func(), err error) {
	o = &opened{}
	if o.cfg, err = env.config(); err != nil {
		return nil, nil, err
	}
	if err = env.readObjectStore(o); err != nil {
		return nil, nil, err
	}
	if what&withKey != 0 {
		if o.key, err = loadKey(o.cfg); err != nil {
			return nil, nil, err
		}
	}
	if o.db, err = connect(ctx, o.cfg); err != nil {
		return nil, nil, err
	}
	if what&migrated != 0 {
		err = migrations.Up(ctx, o.db)
	}
	if err == nil {
		err = o.openStores(ctx, what, nil, env.logger(o.cfg))
	}
	if err != nil {
		o.closeBlobs(0)
		o.db.Close()
		return nil, nil, err
	}
	return o, func() { o.closeBlobs(commandDrain); o.db.Close() }, nil
}

// openStores opens, on the database that answers and is migrated, the archive
// (withArchive: on local files or the object store, refused when the archive recorded
// the other storage mode) and the ledger (withLedger), whose appends go to metrics when
// it is not nil. serve calls it once it has waited for the database.
func (o *opened) openStores(ctx context.Context, what parts, metrics eventstore.AppendObserver, logger *slog.Logger) error {
	var err error
	if what&withArchive != 0 {
		blobs, err := o.openBlobs(logger)
		if err != nil {
			return err
		}
		if o.rules, err = newAppRules(o.db, logger); err != nil {
			return err
		}
		if o.arc, err = openArchive(o.cfg, o.db, blobs, &o.rules); err != nil {
			return err
		}
		if err = o.arc.CheckStorageMode(ctx); err != nil {
			return usageError(err)
		}
	}
	if what&withLedger != 0 {
		o.store, err = newStore(o.db, metrics)
	}
	return err
}

// pingTimeout bounds one attempt to reach the database.
const pingTimeout = 10 * time.Second

// connect opens the database and checks once that it answers (the commands other than
// serve do not wait for it).
func connect(ctx context.Context, cfg app.Config) (*database.DB, error) {
	db, err := openDatabase(cfg)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s does not answer: %w", database.Redact(cfg.DatabaseURL), err)
	}
	return db, nil
}

// newStore returns the event store with every projection, reporting appends to metrics
// when it is not nil.
func newStore(db *database.DB, metrics eventstore.AppendObserver) (*eventstore.Store, error) {
	return eventstore.New(db, eventstore.Options{Projectors: projections.All(), Metrics: metrics})
}

// progress draws a progress bar on stderr when stderr is a terminal, and nothing
// otherwise; a nil *progress is valid and silent.
type progress struct {
	bar *progressbar.ProgressBar
}

func (env *environment) newProgress(description, unit string) *progress {
	f, ok := env.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &progress{bar: progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)}
}

// update moves the bar to done of total units.
func (p *progress) update(done, total int64) {
	if p == nil {
		return
	}
	if total > 0 && p.bar.GetMax64() != total {
		p.bar.ChangeMax64(total)
	}
	_ = p.bar.Set64(done)
}

// finish removes the bar.
func (p *progress) finish() {
	if p != nil {
		_ = p.bar.Finish()
	}
}
