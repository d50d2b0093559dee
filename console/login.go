package console

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/domain/fault"
	"github.com/mailledger/mailledger/identity"
)

func (s *Server) loginRoutes(r *mux.Router) {
	r.Handle("/login", methods{get: s.loginForm, post: s.login})
	r.Handle("/logout", methods{post: s.withSession(s.logout)})
	r.Handle("/", methods{get: s.withSession(s.home)})
}

// loginPage is the login form's data.
type loginPage struct {
	Next, Username, Error string
}

// loginForm shows the login form.
func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, nil, http.StatusOK, "login", "Log in", loginPage{Next: localPath(r.URL.Query().Get("next"))})
}

// login checks the form's user name and password with the API's Authenticator and
// failed-login limiter (the same counts as HTTP Basic): 429 once the limit is reached,
// 401 for wrong credentials, else a new session (a new id: no fixation) and a redirect to
// the page asked for.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		s.fail(w, r, nil, errCrossSite)
		return
	}
	user, pass := r.PostFormValue("username"), r.PostFormValue("password")
	page := loginPage{Next: localPath(r.PostFormValue("next")), Username: user}
	ip := clientIP(r)
	if s.limiter.Blocked(ip, user) {
		s.logger.WarnContext(r.Context(), "console login refused: too many failures", "user", user, "client_ip", ip)
		page.Error = "Too many failed logins. Wait a minute, then try again."
		s.render(w, r, nil, http.StatusTooManyRequests, "login", "Log in", page)
		return
	}
	p, err := s.auth.Authenticate(r.Context(), user, pass)
	if errors.Is(err, identity.ErrBadCredentials) {
		s.limiter.Fail(ip, user)
		s.logger.WarnContext(r.Context(), "console login failed", "user", user, "client_ip", ip)
		page.Error = "Wrong user name or password."
		s.render(w, r, nil, http.StatusUnauthorized, "login", "Log in", page)
		return
	}
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	s.limiter.Succeed(ip, user)
	p, stamp, err := s.auth.Current(r.Context(), p.Username)
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	if old := s.session(r); old != nil {
		s.sessions.end(old.id)
	}
	sess := s.sessions.create(p, stamp)
	setCookie(w, r, sess.id, 0)
	s.logger.InfoContext(r.Context(), "console login", "user", p.Username, "client_ip", ip)
	http.Redirect(w, r, page.Next, http.StatusSeeOther)
}

// errCrossSite refuses a login form posted from another site (login CSRF: a page that
// logs the victim into the attacker's account).
var errCrossSite = fault.New(fault.Forbidden, "the login form was sent from another site")

// sameOrigin reports whether r's Origin header, when a browser sent one, names this host.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// logout ends the session and deletes the cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request, c *call) {
	s.sessions.end(c.sess.id)
	setCookie(w, r, "", -1)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// home is the start page: the menu of the caller's role.
func (s *Server) home(w http.ResponseWriter, r *http.Request, c *call) {
	s.render(w, r, c, http.StatusOK, "home", "Start", nil)
}
