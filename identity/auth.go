package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// ErrBadCredentials means the user name or the password is wrong (which one is not said).
var ErrBadCredentials = errors.New("bad credentials")

// Principal is an authenticated user.
type Principal struct {
	UID      int64
	Username string
	Email    string
	Domain   string
	Role     Role
}

// IsGlobalAdmin reports an administrator of the service itself (domain "local"), as
// opposed to a customer's administrator.
func (p Principal) IsGlobalAdmin() bool { return p.Role == RoleAdmin && p.Domain == LocalDomain }

// dummyHash is compared against when the user does not exist, so that an unknown name
// costs as much time as a wrong password.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("mailledger-dummy-password"), bcrypt.DefaultCost)

// cacheTTL bounds how long a verified password is remembered; bcrypt on every request
// would cost tens of milliseconds each.
const cacheTTL = time.Minute

// Authenticator checks user names and passwords against the users table.
type Authenticator struct {
	users *Users
	now   func() time.Time

	mu    sync.Mutex
	cache map[[32]byte]cached
}

type cached struct {
	p       Principal
	expires time.Time
}

// NewAuthenticator returns an Authenticator over users.
func NewAuthenticator(users *Users) *Authenticator {
	return &Authenticator{users: users, now: time.Now, cache: map[[32]byte]cached{}}
}

// Authenticate returns the principal for username and password, or ErrBadCredentials.
// The bcrypt comparison is constant-time; an unknown user costs the same as a wrong
// password. A success is remembered for a minute under the SHA-256 of the name, the
// password and the stored hash, so a changed password ends it at once.
func (a *Authenticator) Authenticate(ctx context.Context, username, password string) (Principal, error) {
	u, err := a.users.ByUsername(ctx, username)
	if errors.Is(err, ErrNoUser) {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return Principal{}, ErrBadCredentials
	}
	if err != nil {
		return Principal{}, err
	}
	key := cacheKey(username, password, u.PasswordHash)
	if p, ok := a.fromCache(key); ok {
		return p, nil
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil {
		return Principal{}, ErrBadCredentials
	}
	p := Principal{UID: u.UID, Username: u.Username, Email: u.Email, Domain: u.Domain, Role: u.Role}
	a.remember(key, p)
	return p, nil
}

func cacheKey(username, password, hash string) [32]byte {
	h := sha256.New()
	for _, s := range []string{username, password, hash} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

func (a *Authenticator) fromCache(key [32]byte) (Principal, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.cache[key]
	if !ok || a.now().After(c.expires) {
		delete(a.cache, key)
		return Principal{}, false
	}
	return c.p, true
}

func (a *Authenticator) remember(key [32]byte, p Principal) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cache) > 10000 {
		a.cache = map[[32]byte]cached{}
	}
	a.cache[key] = cached{p: p, expires: a.now().Add(cacheTTL)}
}
