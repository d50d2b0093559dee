package identity

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/mailledger/mailledger/domain/fault"
)

// ErrBadCredentials means the user name or the password is wrong (which one is not said).
var ErrBadCredentials = fault.New(fault.Unauthenticated, "bad credentials")

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

// maxCached bounds the remembered password checks.
const maxCached = 10000

// Authenticator checks user names and passwords against the users table.
type Authenticator struct {
	users *Users
	now   func() time.Time
	// cacheKey is a random key of this process for the HMAC that names a remembered
	// password check, so that the cache holds nothing a dump could brute-force offline.
	cacheKey [32]byte

	mu       sync.Mutex
	verified map[[32]byte]time.Time // password check → when it expires
}

// NewAuthenticator returns an Authenticator over users.
func NewAuthenticator(users *Users) *Authenticator {
	a := &Authenticator{users: users, now: time.Now, verified: map[[32]byte]time.Time{}}
	_, _ = rand.Read(a.cacheKey[:])
	return a
}

// Authenticate returns the principal for username and password, or ErrBadCredentials.
// The user's row is read on every call, so a changed role, a disabled user or a deleted
// one takes effect at the next request. Only the password check is remembered, for a
// minute, under an HMAC of the name, the password and the stored hash, so that a changed
// password ends it at once. The bcrypt comparison is constant-time; an unknown or
// disabled user costs the same as a wrong password.
func (a *Authenticator) Authenticate(ctx context.Context, username, password string) (Principal, error) {
	u, err := a.users.ByUsername(ctx, username)
	if errors.Is(err, ErrNoUser) {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return Principal{}, ErrBadCredentials
	}
	if err != nil {
		return Principal{}, err
	}
	if u.Disabled() {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return Principal{}, ErrBadCredentials
	}
	key := a.checkKey(username, password, u.PasswordHash)
	if !a.recall(key) {
		if comparePassword(u.PasswordHash, password) != nil {
			return Principal{}, ErrBadCredentials
		}
		a.remember(key)
	}
	return Principal{UID: u.UID, Username: u.Username, Email: u.Email, Domain: u.Domain, Role: u.Role}, nil
}

// checkKey names one successful password check.
func (a *Authenticator) checkKey(username, password, hash string) [32]byte {
	h := hmac.New(sha256.New, a.cacheKey[:])
	for _, s := range []string{username, password, hash} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

// recall reports whether the password check of key succeeded less than cacheTTL ago.
func (a *Authenticator) recall(key [32]byte) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	expires, ok := a.verified[key]
	if ok && a.now().After(expires) {
		delete(a.verified, key)
		return false
	}
	return ok
}

// remember records a successful password check. A full cache drops its expired entries,
// and all of them if none had expired: forgetting only costs a bcrypt comparison.
func (a *Authenticator) remember(key [32]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if len(a.verified) >= maxCached {
		for k, expires := range a.verified {
			if now.After(expires) {
				delete(a.verified, k)
			}
		}
		if len(a.verified) >= maxCached {
			clear(a.verified)
		}
	}
	a.verified[key] = now.Add(cacheTTL)
}

// Current returns the principal of username as the users table holds it now, and a stamp
// of their password: for a session that logged in with Authenticate and must end when the
// user is deleted or disabled or their password changes (the stamp differs then), and must
// follow a change of role at once, as HTTP Basic does. A deleted or disabled user is
// ErrBadCredentials. The stamp is an HMAC under this process's key, not the hash itself.
func (a *Authenticator) Current(ctx context.Context, username string) (Principal, [32]byte, error) {
	u, err := a.users.ByUsername(ctx, username)
	if errors.Is(err, ErrNoUser) {
		return Principal{}, [32]byte{}, ErrBadCredentials
	}
	if err != nil {
		return Principal{}, [32]byte{}, err
	}
	if u.Disabled() {
		return Principal{}, [32]byte{}, ErrBadCredentials
	}
	return Principal{UID: u.UID, Username: u.Username, Email: u.Email, Domain: u.Domain, Role: u.Role},
		a.checkKey(username, "", u.PasswordHash), nil
}
