package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/console"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
	"github.com/mailledger/mailledger/smarthost"
	"github.com/mailledger/mailledger/smtpd"
)

// shutdownTimeout bounds how long in-flight requests and background consumers get to
// finish after SIGTERM or SIGINT.
const shutdownTimeout = 10 * time.Second

// service is one running `mailledger serve`. Its opened parts are those of the other
// commands' start-up path (open), opened in steps: serve waits for the database.
type service struct {
	*opened
	httpCfg handlers.HTTPConfig
	logger  *slog.Logger
	reg     *prometheus.Registry
	metrics *ledgerMetrics
	api     *handlers.Server
	console *console.Server
	http    *http.Server
	// metricsHTTP serves /metrics on METRICS_ADDR; nil when that is unset.
	metricsHTTP *http.Server
	smtpCfg     smtpd.Config
	smtp        *smtpd.Server // the SMTP receiver on SMTP_ADDR; nil until start
}

// serve runs the HTTP API and the background consumers until ctx ends (SIGTERM or
// SIGINT), then lets in-flight requests finish and the consumers save their offsets.
// /healthz answers at once; the API and /readyz wait for the database.
func (env *environment) serve(ctx context.Context) error {
	svc, err := env.newService()
	if err != nil {
		return err
	}
	defer svc.db.Close()
	defer svc.closeBlobs(0) // staged files go up after the next start
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	httpFailed := make(chan error, 2)
	if err := svc.listen(svc.http, "HTTP_ADDR", svc.cfg.HTTPAddr, httpFailed, cancel); err != nil {
		return err
	}
	if svc.metricsHTTP != nil {
		if err := svc.listen(svc.metricsHTTP, "METRICS_ADDR", svc.httpCfg.MetricsAddr, httpFailed, cancel); err != nil {
			_ = svc.http.Close()
			return err
		}
	}
	stopBackground, startErr := svc.start(ctx)
	if startErr == nil {
		svc.reloadOnHangup(ctx)
	}
	stopErr := svc.shutdown(stopBackground)
	select {
	case err := <-httpFailed:
		return fmt.Errorf("http server: %w", err)
	default:
	}
	if startErr != nil && !errors.Is(startErr, context.Canceled) {
		return startErr
	}
	return stopErr
}

// listen serves srv on addr (the variable name) with at most HTTP_MAX_CONNECTIONS
// connections at once; a failure of the server after the start goes to failed and
// cancels the service.
func (svc *service) listen(srv *http.Server, name, addr string, failed chan<- error, cancel func()) error {
	ln, err := svc.httpCfg.Listen(addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", name, err)
	}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			failed <- fmt.Errorf("%s: %w", name, err)
			cancel()
		}
	}()
	svc.logger.Info("listening", "addr", ln.Addr().String(), "variable", name)
	return nil
}

// newService reads the configuration and the key and prepares the HTTP server; nothing
// here contacts the database.
func (env *environment) newService() (*service, error) {
	cfg, err := env.config()
	if err != nil {
		return nil, err
	}
	httpCfg, err := handlers.HTTPConfigFromEnv(env.getenv)
	if err != nil {
		return nil, usageError(err)
	}
	svc := &service{opened: &opened{cfg: cfg}, httpCfg: httpCfg, logger: env.logger(cfg)}
	if svc.smtpCfg, err = smtpd.ConfigFromEnv(env.getenv, cfg.DataDir); err != nil {
		return nil, usageError(err)
	}
	if err := env.readObjectStore(svc.opened); err != nil {
		return nil, err
	}
	if svc.key, err = loadKey(cfg); err != nil {
		return nil, err
	}
	if svc.db, err = openDatabase(cfg); err != nil {
		return nil, err
	}
	if err := svc.newHTTP(); err != nil {
		svc.db.Close()
		return nil, err
	}
	svc.logger.Info("starting mailledger", "config", cfg, "http", httpCfg, "ledger_public_key", svc.key.PublicKey)
	return svc, nil
}

func (svc *service) newHTTP() error {
	var metricsHandler http.Handler
	svc.reg, metricsHandler = newRegistry()
	var err error
	if svc.metrics, err = newLedgerMetrics(svc.reg); err != nil {
		return err
	}
	auth := identity.NewAuthenticator(identity.NewUsers(svc.db))
	if svc.cfg.BootstrapAdmin.IsZero() {
		svc.logger.Warn("MAILLEDGER_BOOTSTRAP_ADMIN is not set: only users added with `mailledger user add` can call the API")
	}
	limiter := identity.NewFailureLimiter(handlers.MaxLoginFailures, handlers.MaxLoginFailuresPerIP, handlers.LoginFailureWindow)
	svc.console, err = console.New(console.Options{Auth: auth, Limiter: limiter, IdleTimeout: svc.cfg.ConsoleSessionIdle, Logger: svc.logger})
	if err != nil {
		return err
	}
	svc.api, err = handlers.New(handlers.Options{Auth: auth, Limiter: limiter, Multitenancy: svc.cfg.Multitenancy,
		Logger: svc.logger, Metrics: metricsHandler, HTTP: svc.httpCfg, Console: svc.console})
	if err != nil {
		return err
	}
	svc.http = svc.httpCfg.Server(svc.api, svc.logger)
	if svc.httpCfg.MetricsAddr != "" {
		svc.metricsHTTP = svc.httpCfg.Server(handlers.MetricsHandler(metricsHandler, svc.httpCfg.MetricsToken), svc.logger)
	}
	if svc.httpCfg.MetricsAddr == "" && svc.httpCfg.MetricsToken == "" {
		svc.logger.Info("/metrics is not served: set METRICS_ADDR or METRICS_TOKEN to expose it")
	}
	return nil
}

// start waits for the database, migrates it, creates the bootstrap users, opens the
// ledger and the archive, starts the background consumers and opens the API. It returns
// the function that stops the consumers.
func (svc *service) start(ctx context.Context) (func() error, error) {
	if err := waitForDatabase(ctx, svc.db, svc.logger, svc.cfg.DatabaseURL); err != nil {
		return nil, err
	}
	if err := ensureBootstrapUsers(ctx, identity.NewUsers(svc.db), svc.cfg, svc.logger); err != nil {
		return nil, err
	}
	if err := svc.openStores(ctx, withArchive|withLedger, svc.metrics, svc.logger); err != nil {
		return nil, err
	}
	store, arc := svc.store, svc.arc
	head, err := store.Head(ctx)
	if err != nil {
		return nil, err
	}
	svc.metrics.setHead(head.Size)
	signer, err := eventstore.NewSigner(store, svc.key, svc.cfg.LedgerOrigin)
	if err != nil {
		return nil, err
	}
	application, err := newApplication(svc.cfg, store, signer, arc, svc.rules, svc.storageUsage(), svc.logger)
	if err != nil {
		return nil, err
	}
	keeper, err := app.NewCertificateKeeper(application.Certificates, svc.cfg.CertificateDir(), svc.logger)
	if err != nil {
		return nil, err
	}
	if err := reapplyIfOlder(ctx, application.Erasure, svc.logger); err != nil {
		return nil, err
	}
	purger, err := app.NewPurger(store, arc, app.PurgerConfig{})
	if err != nil {
		return nil, err
	}
	stop, err := startBackground(ctx, svc, store, signer, backgroundWork{
		erasure: application.Erasure, exports: application.Exports, purger: purger, certificates: keeper})
	if err != nil {
		return nil, err
	}
	svc.api.Attach(application)
	svc.console.Attach(application)
	if err := svc.startSMTP(arc, application.Tenancy); err != nil {
		return stop, err
	}
	svc.logger.Info("ready", "dialect", string(svc.db.Dialect), "ledger_size", head.Size, "ledger_head", head.ChainHash.String())
	return stop, nil
}

// startSMTP starts the SMTP receiver on SMTP_ADDR over the archive. Under MULTITENANCY=1
// without SMTP_TENANT_DOMAINS, a recipient's tenant is the customer whose domain it is
// (app.DomainTenants).
func (svc *service) startSMTP(arc *archive.Archive, tenancy *app.Tenancy) error {
	cfg := svc.smtpCfg
	if svc.cfg.Multitenancy && !cfg.Tenants.Mapped() {
		cfg.Tenants = cfg.Tenants.WithLookup(app.NewDomainTenants(tenancy).Tenant)
	}
	srv, err := smtpd.New(cfg, arc, smtpd.Options{Logger: svc.logger, Registerer: svc.reg})
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	svc.smtp = srv
	return nil
}

// newApplication wires the use cases: the archive, the erasure workflow
// (GDPR_DISTINCT_APPROVER), the eDiscovery exports (DIR_EXPORT, EDISCOVERY_*; their runs
// log to logger), the certificates (PDFSERVICE_URL) and the restores (SMARTHOST_*).
func newApplication(cfg app.Config, store *eventstore.Store, signer *eventstore.Signer, arc *archive.Archive,
	rules appRules, storage app.StorageUsage, logger *slog.Logger) (*app.Application, error) {
	exports := cfg.Exports
	exports.Logger = logger
	if cfg.PDFServiceURL == "" {
		logger.Warn("PDFSERVICE_URL is not set: GET …/certificate/pdf answers 503; the HTML certificates and the bundles work")
	}
	relay, err := newSmarthost(cfg.Smarthost)
	if err != nil {
		return nil, err
	}
	if relay == nil {
		logger.Info("SMARTHOST_ADDR is not set: POST …/messages/{id}/restore answers 503")
	}
	return app.New(store, signer, app.ApplicationConfig{
		Archive:             arc,
		Smarthost:           relay,
		HeaderChecksChanged: rules.tagger.Invalidate,
		RetentionChanged:    rules.retention.Invalidate,
		Storage:             storage,
		Exports:             &exports,
		Erasure: app.ErasureConfig{AllowSameApprover: !cfg.DistinctApprover, Logger: logger,
			Kept: keptCertificates(cfg, signer.Key())},
		Certificates: app.CertificatesConfig{PDFServiceURL: cfg.PDFServiceURL},
		Multitenancy: cfg.Multitenancy,
	})
}

// shutdown lets in-flight requests and the messages being received over SMTP finish,
// then stops the background consumers.
func (svc *service) shutdown(stopBackground func() error) error {
	svc.logger.Info("shutting down")
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	smtpStopped := make(chan error, 1)
	go func() { smtpStopped <- svc.stopSMTP(ctx) }()
	err := errors.Join(svc.http.Shutdown(ctx), <-smtpStopped)
	if svc.metricsHTTP != nil {
		err = errors.Join(err, svc.metricsHTTP.Shutdown(ctx))
	}
	if stopBackground != nil {
		err = errors.Join(err, stopBackground())
	}
	if err != nil {
		svc.logger.Error("shutdown incomplete", "error", err.Error())
		return err
	}
	svc.logger.Info("stopped")
	return nil
}

// newSmarthost is the relay of restores from the SMARTHOST_* settings; nil without
// SMARTHOST_ADDR. A bad setting is a configuration error (exit code 2).
func newSmarthost(s app.SmarthostSettings) (app.Smarthost, error) {
	if s.Addr == "" {
		return nil, nil
	}
	cfg := smarthost.Config{Addr: s.Addr, StartTLS: s.StartTLS, Username: s.User, Password: s.Password, From: s.From, Timeout: s.Timeout}
	if s.CAFile != "" {
		pool, err := smarthost.LoadCAs(s.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", app.ErrConfig, err)
		}
		cfg.RootCAs = pool
	}
	c, err := smarthost.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", app.ErrConfig, err)
	}
	return c, nil
}

// stopSMTP stops the SMTP receiver, if it started: no new connections, the messages in
// DATA finish their commit.
func (svc *service) stopSMTP(ctx context.Context) error {
	if svc.smtp == nil {
		return nil
	}
	return svc.smtp.Shutdown(ctx)
}

// reloadOnHangup waits until ctx ends; each SIGHUP meanwhile makes the header checks and
// the retention rules be read again before the next message (they are also read again
// every app.DefaultHeaderRulesRefresh, and at once after a change through the API).
func (svc *service) reloadOnHangup(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			svc.rules.invalidate()
			svc.logger.Info("SIGHUP: the header checks and retention rules are read again")
		}
	}
}
