package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
)

// shutdownTimeout bounds how long in-flight requests and background consumers get to
// finish after SIGTERM or SIGINT.
const shutdownTimeout = 10 * time.Second

// service is one running `mailledger serve`.
type service struct {
	cfg     app.Config
	logger  *slog.Logger
	key     *eventstore.Key
	db      *database.DB
	reg     *prometheus.Registry
	metrics *ledgerMetrics
	api     *handlers.Server
	http    *http.Server
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
	ln, err := net.Listen("tcp", svc.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on HTTP_ADDR: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	httpFailed := make(chan error, 1)
	go func() {
		if err := svc.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			httpFailed <- err
			cancel()
		}
	}()
	svc.logger.Info("listening", "addr", ln.Addr().String())
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

// newService reads the configuration and the key and prepares the HTTP server; nothing
// here contacts the database.
func (env *environment) newService() (*service, error) {
	cfg, err := env.config()
	if err != nil {
		return nil, err
	}
	svc := &service{cfg: cfg, logger: env.logger(cfg)}
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
	svc.logger.Info("starting mailledger", "config", cfg, "ledger_public_key", svc.key.PublicKey)
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
		Logger: svc.logger, Metrics: metricsHandler})
	if err != nil {
		return err
	}
	svc.http = &http.Server{
		Handler:           svc.api,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(svc.logger.Handler(), slog.LevelWarn),
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
	arc, err := openArchive(svc.cfg, svc.db)
	if err != nil {
		return nil, err
	}
	store, err := newStore(svc.db, svc.metrics)
	if err != nil {
		return nil, err
	}
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
	purger, err := app.NewPurger(store, arc, nil)
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
	opts := []app.Option{app.WithArchive(arc), app.WithExports(exports),
		app.WithErasureOptions(app.WithDistinctApprover(cfg.DistinctApprover), app.WithErasureLogger(logger))}
	if cfg.PDFServiceURL != "" {
		opts = append(opts, app.WithCertificatesOptions(app.WithPDFService(cfg.PDFServiceURL)))
	} else {
		logger.Warn("PDFSERVICE_URL is not set: GET …/certificate/pdf answers 503; the HTML certificates and the bundles work")
	}
	return app.New(store, signer, opts...)
}

// shutdown lets in-flight requests finish, then stops the background consumers.
func (svc *service) shutdown(stopBackground func() error) error {
	svc.logger.Info("shutting down")
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := svc.http.Shutdown(ctx)
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
