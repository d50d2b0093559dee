// Package console is mailledger's web console: server-rendered pages (html/template) over
// the same use cases as the API (package app), with sessions instead of HTTP Basic. It
// holds no SQL and no role or tenant rule of its own: app.Tenancy resolves the caller,
// app.Scope says what they may reach, and the use cases scope every read to the tenant.
package console

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/identity"
)

// DefaultIdleTimeout ends a session not used for this long (CONSOLE_SESSION_IDLE).
const DefaultIdleTimeout = 30 * time.Minute

//go:embed static
var staticFiles embed.FS

// Authenticator checks a user name and password (*identity.Authenticator, the one the API's
// HTTP Basic uses), and reads a logged-in user again on every page (Current), so that a
// deleted or disabled user, or a changed password, ends the session at once, and a changed
// role applies at once, as with HTTP Basic.
type Authenticator interface {
	Authenticate(ctx context.Context, username, password string) (identity.Principal, error)
	Current(ctx context.Context, username string) (identity.Principal, [32]byte, error)
}

var _ Authenticator = (*identity.Authenticator)(nil)

// Options configure a Server.
type Options struct {
	// Auth checks the login form's credentials; required.
	Auth Authenticator
	// Limiter counts failed logins; required, and the API's own, so that the form and
	// HTTP Basic share one count.
	Limiter *identity.FailureLimiter
	// IdleTimeout ends a session not used for this long; DefaultIdleTimeout when zero.
	IdleTimeout time.Duration
	// Logger receives the login and error logs; slog.Default() when nil.
	Logger *slog.Logger
	// Now is the clock of the sessions; time.Now when nil (tests set it).
	Now func() time.Time
}

// Server serves the console's pages. Until Attach hands it the application, every page
// but the login form and the style sheet answers 503.
type Server struct {
	auth     Authenticator
	limiter  *identity.FailureLimiter
	logger   *slog.Logger
	sessions *sessions
	pages    *pages
	app      atomic.Pointer[app.Application]
	router   *mux.Router
}

// New returns a Server; it rejects a missing Authenticator or Limiter.
func New(opts Options) (*Server, error) {
	if opts.Auth == nil || opts.Limiter == nil {
		return nil, errors.New("console: an Authenticator and a Limiter are required")
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{auth: opts.Auth, limiter: opts.Limiter, logger: opts.Logger,
		sessions: newSessions(opts.IdleTimeout, opts.Now), pages: p}
	s.router = s.routes()
	return s, nil
}

// Attach makes the application available to the pages.
func (s *Server) Attach(a *app.Application) { s.app.Store(a) }

// ServeHTTP answers a console request, with the security headers of every page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // "no-referrer" would make browsers send Origin: null with the forms
	h.Set("X-Frame-Options", "DENY")
	s.router.ServeHTTP(w, r)
}

// routes registers every page; each file registers its own.
func (s *Server) routes() *mux.Router {
	r := mux.NewRouter()
	static, _ := fs.Sub(staticFiles, "static")
	r.Handle("/static/{file}", methods{get: http.StripPrefix("/static/", http.FileServerFS(static)).ServeHTTP})
	s.loginRoutes(r)
	s.archiveRoutes(r)
	s.erasureRoutes(r)
	s.holdRoutes(r)
	s.tenantRoutes(r)
	s.restoreRoutes(r)
	s.exportRoutes(r)
	s.ledgerRoutes(r)
	s.adminRoutes(r)
	r.NotFoundHandler = s.withSession(func(w http.ResponseWriter, r *http.Request, c *call) {
		s.fail(w, r, c, errNoPage)
	})
	return r
}

// methods routes GET (and HEAD) to get and POST to post; any other method, or one without
// a handler, is 405.
type methods struct {
	get, post http.HandlerFunc
}

func (m methods) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && m.get != nil:
		m.get(w, r)
	case r.Method == http.MethodPost && m.post != nil:
		m.post(w, r)
	default:
		var allow []string
		if m.get != nil {
			allow = append(allow, "GET", "HEAD")
		}
		if m.post != nil {
			allow = append(allow, "POST")
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}
