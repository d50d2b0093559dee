package console

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/identity"
)

// maxUserAgent bounds the user agent stored in the ledger (as the API does).
const maxUserAgent = 512

// requestIDHeader is the correlation id the API's middleware gives every request, the
// console's included (handlers.RequestIDHeader); it goes into the ledger events.
const requestIDHeader = "X-Request-ID"

// call is one request of a logged-in user: the session, the caller as app.Tenancy
// resolved them, and the application.
type call struct {
	sess  *session
	scope app.Scope
	app   *app.Application
	// switched is the tenant a global administrator chose in the tenant switch (under
	// MULTITENANCY), "" when none: the API's `?tenant=`.
	switched string
}

// homeTenant is the tenant whose archive the caller reads and in which their new requests
// and holds are made: the tenant switch of a global administrator, else their own.
func (c *call) homeTenant() string {
	if c.switched != "" {
		return c.switched
	}
	return c.scope.Tenant
}

type pageFunc func(w http.ResponseWriter, r *http.Request, c *call)

// withSession admits a request with a live session: otherwise a GET is sent to the login
// form (and back after it), a POST too, with nothing done. A POST must carry the session's
// CSRF token in its form (csrf), else 403 and nothing done. The caller's scope is resolved
// once, by app.Tenancy, as for the API.
func (s *Server) withSession(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := s.session(r)
		if sess == nil {
			toLogin(w, r)
			return
		}
		a := s.app.Load()
		if a == nil {
			s.fail(w, r, &call{sess: sess}, errNotReady)
			return
		}
		if !s.current(w, r, sess) {
			return
		}
		c := &call{sess: sess, app: a}
		scope, err := a.Tenancy.Resolve(r.Context(), sess.principal, r.Host)
		if err != nil {
			s.fail(w, r, c, err)
			return
		}
		c.scope = scope
		if scope.IsGlobalAdmin() && a.Tenancy.Multitenancy() {
			c.switched = sess.tenant
		}
		if r.Method == http.MethodPost && !sess.validCSRF(r.PostFormValue("csrf")) {
			s.logger.WarnContext(r.Context(), "console: CSRF token missing or wrong", "user", sess.principal.Username, "path", r.URL.Path)
			s.fail(w, r, c, errBadCSRF)
			return
		}
		fn(w, r, c)
	}
}

// current reads the session's user again: a deleted or disabled user, or a changed
// password, ends the session (and the browser goes to the login form); a changed role
// applies to this request. It answers and returns false when the request must stop.
func (s *Server) current(w http.ResponseWriter, r *http.Request, sess *session) bool {
	p, stamp, err := s.auth.Current(r.Context(), sess.principal.Username)
	switch {
	case errors.Is(err, identity.ErrBadCredentials) || (err == nil && stamp != sess.stamp):
		s.sessions.end(sess.id)
		s.logger.InfoContext(r.Context(), "console session ended: user deleted, disabled or password changed", "user", sess.principal.Username)
		toLogin(w, r)
		return false
	case err != nil:
		s.fail(w, r, &call{sess: sess}, err)
		return false
	}
	sess.principal = p
	return true
}

// withCompliance admits, beyond withSession, only the callers app.Scope.ComplianceTenant
// admits (global administrators: every tenant, or the one of their tenant switch;
// auditors: their own), and hands fn that tenant.
func (s *Server) withCompliance(fn func(w http.ResponseWriter, r *http.Request, c *call, tenant string)) http.HandlerFunc {
	return s.withSession(func(w http.ResponseWriter, r *http.Request, c *call) {
		tenant, err := c.scope.ComplianceTenant()
		if err != nil {
			s.fail(w, r, c, err)
			return
		}
		if c.switched != "" {
			tenant = c.switched
		}
		fn(w, r, c, tenant)
	})
}

// session returns the live session of r's cookie, nil when none.
func (s *Server) session(r *http.Request) *session {
	ck, err := r.Cookie(CookieName)
	if err != nil || ck.Value == "" {
		return nil
	}
	return s.sessions.get(ck.Value)
}

// toLogin sends the browser to the login form, remembering the page of a GET.
func toLogin(w http.ResponseWriter, r *http.Request) {
	target := "/login"
	if r.Method == http.MethodGet && r.URL.Path != "/" {
		target += "?next=" + url.QueryEscape(r.URL.RequestURI())
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// localPath is next if it is a path of this site ("/…", not "//…"), else "/".
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

// metadata says who caused the events of r and from where, as the API records it.
func metadata(r *http.Request, w http.ResponseWriter, c *call) domain.Metadata {
	ua := r.UserAgent()
	if len(ua) > maxUserAgent {
		ua = strings.ToValidUTF8(ua[:maxUserAgent], "")
	}
	return domain.Metadata{Actor: c.sess.principal.Username, ClientIP: clientIP(r), UserAgent: ua,
		CorrelationID: w.Header().Get(requestIDHeader)}
}

// clientIP is the TCP peer's address, never a header the client could forge (as the API).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
