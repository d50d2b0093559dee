package handlers

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/identity"
)

// Authenticator checks HTTP Basic credentials (*identity.Authenticator over the users
// table). It returns identity.ErrBadCredentials (possibly wrapped) for a wrong user name
// or password, and another error when it cannot decide, such as a database that does not
// answer.
type Authenticator interface {
	Authenticate(ctx context.Context, username, password string) (identity.Principal, error)
}

var _ Authenticator = (*identity.Authenticator)(nil)

// Caller is the authenticated user of a request and the tenant they work in.
type Caller struct {
	identity.Principal
	// Tenant is the user's tenant (app.Scope.Tenant): "default" in single-tenant mode and
	// for the global administrators; in multi-tenant mode the customer_id of the user's
	// customer, or the user's domain when no customer has it.
	Tenant string
	// Scope is the caller as app.Tenancy resolved it, once for the request.
	Scope app.Scope
}

type callerKey struct{}

// CallerFrom returns the caller that the authentication middleware admitted.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// caller returns the admitted caller of r; the authentication middleware guarantees one
// on every /api/v1 route.
func caller(r *http.Request) Caller {
	c, _ := CallerFrom(r.Context())
	return c
}

// callerOf resolves the tenant of p calling r (docs/api.md, "Authentication and roles"):
// app.Tenancy decides, once per request.
func (s *Server) callerOf(r *http.Request, p identity.Principal) (Caller, error) {
	scope, err := s.app.Load().Tenancy.Resolve(r.Context(), p, r.Host)
	if err != nil {
		return Caller{}, err
	}
	return Caller{Principal: p, Tenant: scope.Tenant, Scope: scope}, nil
}

// requireAuth admits only requests whose Basic credentials the Authenticator accepts.
// No credentials or wrong ones get 401 with the WWW-Authenticate challenge; a client IP
// and user name with too many recent failures get 429 before the password is checked.
// Neither the password nor its hash is ever logged.
func (s *Server) requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r)
		if err != nil {
			refuseUnread(w)
			writeError(w, r, s.logger, err)
			return
		}
		setLoggedUser(r.Context(), p.Username)
		c, err := s.callerOf(r, p)
		if err != nil {
			refuseUnread(w)
			writeError(w, r, s.logger, err)
			return
		}
		ctx := context.WithValue(r.Context(), callerKey{}, c)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// authenticate checks the Basic credentials of r, counting failures in the limiter. It
// reads the headers only, never the body.
func (s *Server) authenticate(r *http.Request) (identity.Principal, error) {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return identity.Principal{}, ErrUnauthenticated
	}
	ip := clientIP(r)
	if s.limiter.Blocked(ip, user) {
		s.logger.WarnContext(r.Context(), "login refused: too many failures", "user", user, "client_ip", ip)
		return identity.Principal{}, ErrTooManyRequests
	}
	p, err := s.auth.Authenticate(r.Context(), user, pass)
	if errors.Is(err, identity.ErrBadCredentials) {
		s.limiter.Fail(ip, user)
		s.logger.WarnContext(r.Context(), "login failed", "user", user, "client_ip", ip)
	}
	if err != nil {
		return identity.Principal{}, err
	}
	s.limiter.Succeed(ip, user)
	return p, nil
}

// clientIP is the address the request came from: the TCP peer, never a header that the
// client could forge (behind a reverse proxy, every client shares the proxy's address).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// holdScope is the tenant whose legal holds c manages (docs/api.md): every tenant for a
// global administrator, their own for an auditor (app.Scope.ComplianceTenant decides).
// Everybody else is forbidden.
func holdScope(c Caller) (string, error) {
	return c.Scope.ComplianceTenant()
}

// tenantParam returns the tenant a request acts in: the caller's own, or the `tenant`
// query parameter, which only a global administrator may point at another tenant (in
// multi-tenant mode; with MULTITENANCY=0 the only tenant is "default").
func (s *Server) tenantParam(r *http.Request, c Caller) (string, error) {
	values, given := r.URL.Query()["tenant"]
	if !given {
		return c.Tenant, nil
	}
	var ve ValidationError
	t := ""
	if len(values) != 1 || strings.TrimSpace(values[0]) == "" || len(values[0]) > 255 {
		ve.add("tenant", "must be given once, 1 to 255 characters")
	} else if t = strings.TrimSpace(values[0]); !s.multitenancy && t != app.DefaultTenant {
		ve.add("tenant", `multi-tenancy is off: the only tenant is "default"`)
	}
	if err := ve.err(); err != nil {
		return "", err
	}
	if t != c.Tenant && !c.IsGlobalAdmin() {
		return "", ErrForbidden
	}
	return t, nil
}
