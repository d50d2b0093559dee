package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"

	"github.com/mailledger/mailledger/identity"
)

// CookieName is the session cookie: a random 256-bit id, HttpOnly, SameSite=Strict,
// Path=/, Secure when the request came over TLS.
const CookieName = "mailledger_session"

// session is one logged-in user: who, the CSRF token of every form, when last seen.
type session struct {
	id        string
	principal identity.Principal
	stamp     [32]byte // the password's stamp at login (Authenticator.Current)
	csrf      string
	lastSeen  time.Time
	tenant    string // the global administrator's tenant switch ("" none)
}

// sessions keeps the sessions of this process in memory: a restart logs everybody out,
// and each node of several has its own. A session not used for idle ends.
type sessions struct {
	idle time.Duration
	now  func() time.Time

	mu   sync.Mutex
	byID map[string]*session
}

func newSessions(idle time.Duration, now func() time.Time) *sessions {
	return &sessions{idle: idle, now: now, byID: map[string]*session{}}
}

// randomToken is 32 random bytes, base64url without padding.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// create starts a session of p; expired sessions are dropped on the way.
func (s *sessions) create(p identity.Principal, stamp [32]byte) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.dropExpired(now)
	sess := &session{id: randomToken(), principal: p, stamp: stamp, csrf: randomToken(), lastSeen: now}
	s.byID[sess.id] = sess
	return sess
}

// get returns the live session of id and marks it used; nil when unknown or idle too
// long (then it is ended).
func (s *sessions) get(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.byID[id]
	if !ok {
		return nil
	}
	now := s.now()
	if now.Sub(sess.lastSeen) >= s.idle {
		delete(s.byID, id)
		return nil
	}
	sess.lastSeen = now
	copied := *sess
	return &copied
}

// end forgets the session of id.
func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
}

func (s *sessions) dropExpired(now time.Time) {
	for id, sess := range s.byID {
		if now.Sub(sess.lastSeen) >= s.idle {
			delete(s.byID, id)
		}
	}
}

// validCSRF compares a form's token with the session's in constant time.
func (sess *session) validCSRF(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(sess.csrf)) == 1
}

// setCookie sends the session cookie of id (an empty id with maxAge -1 deletes it).
func setCookie(w http.ResponseWriter, r *http.Request, id string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: id, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
}

// switchTenant records the tenant the global administrator of session id chose ("" none).
func (s *sessions) switchTenant(id, tenant string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess, ok := s.byID[id]; ok {
		sess.tenant = tenant
	}
}
