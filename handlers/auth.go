package handlers

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	Username string
	Role     string // admin, auditor or user
}

// Authenticator checks HTTP Basic credentials. It returns ErrUnauthenticated (possibly
// wrapped) for wrong credentials and another error when it cannot decide, such as a
// database that does not answer.
type Authenticator interface {
	Authenticate(ctx context.Context, username, password string) (Principal, error)
}

// BootstrapAdmin authenticates the one administrator configured by
// MAILLEDGER_BOOTSTRAP_ADMIN, until users are stored in the database. With no user
// configured it rejects everyone.
type BootstrapAdmin struct {
	userHash, passHash [sha256.Size]byte
	configured         bool
	username           string
}

var _ Authenticator = (*BootstrapAdmin)(nil)

// NewBootstrapAdmin returns an Authenticator for username and password; empty ones mean
// no administrator, so every call is rejected.
func NewBootstrapAdmin(username, password string) *BootstrapAdmin {
	if username == "" || password == "" {
		return &BootstrapAdmin{}
	}
	return &BootstrapAdmin{
		userHash:   sha256.Sum256([]byte(username)),
		passHash:   sha256.Sum256([]byte(password)),
		configured: true,
		username:   username,
	}
}

// Authenticate compares the SHA-256 hashes of both values in constant time, so that
// neither the length nor the content of the secret leaks through timing.
func (b *BootstrapAdmin) Authenticate(_ context.Context, username, password string) (Principal, error) {
	u := sha256.Sum256([]byte(username))
	p := sha256.Sum256([]byte(password))
	userOK := subtle.ConstantTimeCompare(u[:], b.userHash[:])
	passOK := subtle.ConstantTimeCompare(p[:], b.passHash[:])
	if !b.configured || userOK&passOK != 1 {
		return Principal{}, ErrUnauthenticated
	}
	return Principal{Username: b.username, Role: "admin"}, nil
}

type principalKey struct{}

// PrincipalFrom returns the caller that the authentication middleware admitted.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// requireAuth admits only requests whose Basic credentials auth accepts; the others get
// 401 with the WWW-Authenticate challenge.
func (s *Server) requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok {
			writeError(w, r, s.logger, ErrUnauthenticated)
			return
		}
		p, err := s.auth.Authenticate(r.Context(), user, pass)
		if err != nil {
			writeError(w, r, s.logger, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}
