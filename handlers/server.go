// Package handlers is mailledger's HTTP surface: routes (gorilla/mux), authentication,
// JSON and the mapping of errors to the status codes of docs/api.md.
// Handlers stay thin: decode, call the app, map the error.
package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/identity"
)

// Failed-login limits (docs/api.md "Failed logins"): 429 after MaxLoginFailures
// failures a minute of one client IP for one user name, or MaxLoginFailuresPerIP of one
// client network across all user names.
const (
	MaxLoginFailures      = 10
	MaxLoginFailuresPerIP = 50
	LoginFailureWindow    = time.Minute
)

// Options configure a Server.
type Options struct {
	// Auth checks the credentials of every /api/v1 call; required.
	Auth Authenticator
	// Limiter counts failed logins; NewFailureLimiter(MaxLoginFailures,
	// MaxLoginFailuresPerIP, LoginFailureWindow) when nil.
	Limiter *identity.FailureLimiter
	// Multitenancy is MULTITENANCY: when set, a user's domain is their tenant; otherwise
	// everybody works in the tenant "default".
	Multitenancy bool
	// Logger receives request and error logs; slog.Default() when nil.
	Logger *slog.Logger
	// Metrics serves /metrics, on this server only when HTTP.MetricsToken is set (and
	// then only to `Authorization: Bearer <token>`); /metrics is 404 otherwise.
	Metrics http.Handler
	// HTTP holds the per-request deadlines (BodyTimeout, DownloadWriteTimeout) and the
	// metrics token; zero fields take their defaults.
	HTTP HTTPConfig
	// ReadyTimeout bounds the database ping of /readyz; 2 s when zero.
	ReadyTimeout time.Duration
	// Console, when set, answers every path the API does not route (the web console under
	// /), behind the same correlation ids, panic recovery, request log and body limit.
	Console http.Handler
}

// Server routes mailledger's HTTP API. It answers /healthz at once and /readyz with 503
// until Attach hands it the application, which happens once the database answers.
type Server struct {
	auth         Authenticator
	limiter      *identity.FailureLimiter
	multitenancy bool
	logger       *slog.Logger
	metrics      http.Handler
	http         HTTPConfig
	timeout      time.Duration
	console      http.Handler
	app          atomic.Pointer[app.Application]
	router       *mux.Router
}

// New returns a Server; it rejects a nil Authenticator.
func New(opts Options) (*Server, error) {
	if opts.Auth == nil {
		return nil, errors.New("handlers: an Authenticator is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 2 * time.Second
	}
	if opts.Limiter == nil {
		opts.Limiter = identity.NewFailureLimiter(MaxLoginFailures, MaxLoginFailuresPerIP, LoginFailureWindow)
	}
	opts.HTTP.setDefaults()
	s := &Server{auth: opts.Auth, limiter: opts.Limiter, multitenancy: opts.Multitenancy,
		logger: opts.Logger, metrics: opts.Metrics, http: opts.HTTP, timeout: opts.ReadyTimeout, console: opts.Console}
	s.router = s.routes()
	return s, nil
}

// Attach makes the application available to the API and to /readyz.
func (s *Server) Attach(a *app.Application) { s.app.Store(a) }

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

func (s *Server) routes() *mux.Router {
	r := mux.NewRouter()
	r.Use(correlate, s.recoverPanics, s.logRequests, limitBody)
	r.Handle("/healthz", onlyGET(s.healthz))
	r.Handle("/readyz", onlyGET(s.readyz))
	if s.metrics != nil && s.http.MetricsToken != "" {
		r.Handle("/metrics", bearer(s.http.MetricsToken, onlyGET(s.metrics.ServeHTTP)))
	}
	api := r.PathPrefix("/api/v1").Subrouter()
	api.Use(s.requireApp, s.requireAuth, s.bodyDeadline)
	s.ledgerRoutes(api)
	s.messageRoutes(api)
	s.legalHoldRoutes(api)
	s.retentionRoutes(api)
	s.erasureRoutes(api)
	s.ediscoveryRoutes(api)
	s.managementRoutes(api)
	api.NotFoundHandler = correlate(s.logRequests(limitBody(s.requireApp(s.requireAuth(http.HandlerFunc(s.notFound))))))
	if s.console != nil {
		r.PathPrefix("/").Handler(s.console)
	}
	r.NotFoundHandler = correlate(s.logRequests(http.HandlerFunc(s.notFound)))
	return r
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when the database answers a ping, 503 database_unavailable otherwise
// (including while serve still waits for the database at start).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	a := s.app.Load()
	if a == nil {
		writeError(w, r, s.logger, ErrDatabaseUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	if err := a.Ping(ctx); err != nil {
		s.logger.WarnContext(r.Context(), "readiness check failed", "error", err.Error())
		writeError(w, r, s.logger, ErrDatabaseUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// requireApp answers 503 database_unavailable until the application is attached (before
// authentication, which needs the database too).
func (s *Server) requireApp(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.app.Load() == nil {
			refuseUnread(w)
			writeError(w, r, s.logger, ErrDatabaseUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, s.logger, errNoRoute)
}

// onlyGET answers 405 to methods other than GET and HEAD. (Routes check the method
// themselves: gorilla/mux's Methods matcher answers 404 instead of 405 when a later
// route of the same subrouter does not match the path.)
func onlyGET(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, r, "GET, HEAD")
			return
		}
		next(w, r)
	})
}

// onlyPOST answers 405 to methods other than POST.
func onlyPOST(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			methodNotAllowed(w, r, "POST")
			return
		}
		next(w, r)
	})
}

// getOrPOST routes GET (and HEAD) to get and POST to post, and answers 405 otherwise.
func getOrPOST(get, post http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			get(w, r)
		case http.MethodPost:
			post(w, r)
		default:
			methodNotAllowed(w, r, "GET, HEAD, POST")
		}
	})
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	writeJSON(w, http.StatusMethodNotAllowed, map[string]apiError{"error": {
		Code: "method_not_allowed", Message: r.Method + " is not allowed on " + r.URL.Path}})
}

// recoverPanics turns a handler panic into 500 internal and a log line.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.logger.ErrorContext(r.Context(), "handler panic", "method", r.Method, "path", r.URL.Path, "panic", v)
				writeError(w, r, s.logger, errors.New("panic"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status code a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (rec *statusRecorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

func (rec *statusRecorder) WriteHeader(code int) {
	rec.status = code
	rec.ResponseWriter.WriteHeader(code)
}

// requestLog is what the middleware below logRequests tells it about a request: the
// authenticated user.
type requestLog struct {
	user string
}

type requestLogKey struct{}

// setLoggedUser records the authenticated user for the request's log line.
func setLoggedUser(ctx context.Context, user string) {
	if l, ok := ctx.Value(requestLogKey{}).(*requestLog); ok {
		l.user = user
	}
}

// logRequests logs one line per request: method, path, status, duration, the request id
// and the authenticated user ("" when none), never headers or query values (they may
// carry credentials). Probes and scrapes log at debug level.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		info := &requestLog{}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), requestLogKey{}, info)))
		level := slog.LevelInfo
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || r.URL.Path == "/metrics" {
			level = slog.LevelDebug
		}
		s.logger.LogAttrs(r.Context(), level, "http request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.status), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("request_id", requestID(r.Context())), slog.String("user", info.user))
	})
}
