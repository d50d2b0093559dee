package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
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
	http    *http.Server
	// metricsHTTP serves /metrics on METRICS_ADDR; nil when that is unset.
	metricsHTTP *http.Server
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
		<-ctx.Done()
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
	svc.api, err = handlers.New(handlers.Options{Auth: auth, Multitenancy: svc.cfg.Multitenancy,
		Logger: svc.logger, Metrics: metricsHandler, HTTP: svc.httpCfg})
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
	if err := svc.openStores(withArchive|withLedger, svc.metrics); err != nil {
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
	application, err := newApplication(svc.cfg, store, signer, arc, svc.logger)
	if err != nil {
		return nil, err
	}
	purger, err := app.NewPurger(store, arc, app.PurgerConfig{})
	if err != nil {
		return nil, err
	}
	stop, err := startBackground(ctx, svc, store, signer, backgroundWork{
		erasure: application.Erasure, exports: application.Exports, purger: purger})
	if err != nil {
		return nil, err
	}
	svc.api.Attach(application)
	svc.logger.Info("ready", "dialect", string(svc.db.Dialect), "ledger_size", head.Size, "ledger_head", head.ChainHash.String())
	return stop, nil
}

// newApplication wires the use cases: the archive, the erasure workflow
// (GDPR_DISTINCT_APPROVER), the eDiscovery exports (DIR_EXPORT, EDISCOVERY_*; their runs
// log to logger) and the certificates (PDFSERVICE_URL).
func newApplication(cfg app.Config, store *eventstore.Store, signer *eventstore.Signer, arc *archive.Archive, logger *slog.Logger) (*app.Application, error) {
	exports := cfg.Exports
	exports.Logger = logger
	if cfg.PDFServiceURL == "" {
		logger.Warn("PDFSERVICE_URL is not set: GET …/certificate/pdf answers 503; the HTML certificates and the bundles work")
	}
	return app.New(store, signer, app.ApplicationConfig{
		Archive:      arc,
		Exports:      &exports,
		Erasure:      app.ErasureConfig{AllowSameApprover: !cfg.DistinctApprover, Logger: logger},
		Certificates: app.CertificatesConfig{PDFServiceURL: cfg.PDFServiceURL},
		Multitenancy: cfg.Multitenancy,
	})
}

// shutdown lets in-flight requests finish, then stops the background consumers.
func (svc *service) shutdown(stopBackground func() error) error {
	svc.logger.Info("shutting down")
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := svc.http.Shutdown(ctx)
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
