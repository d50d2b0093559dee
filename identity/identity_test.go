package identity_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/identity"
)

func TestUsers(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		users := identity.NewUsers(dbtest.Open(t, d))
		hash, err := identity.HashPassword("s3cret")
		require.NoError(t, err)
		assert.NotContains(t, hash, "s3cret")

		uid, err := users.Add(ctx, identity.User{Username: "auditor1", Email: "Aud@Example.test", Domain: "example.test", PasswordHash: hash, Role: identity.RoleAuditor})
		require.NoError(t, err)
		assert.Greater(t, uid, int64(0))
		_, err = users.Add(ctx, identity.User{Username: "auditor1", PasswordHash: hash})
		assert.ErrorIs(t, err, identity.ErrUserExists)

		u, err := users.ByUsername(ctx, "auditor1")
		require.NoError(t, err)
		assert.Equal(t, "aud@example.test", u.Email)
		assert.Equal(t, identity.RoleAuditor, u.Role)

		auth := identity.NewAuthenticator(users)
		p, err := auth.Authenticate(ctx, "auditor1", "s3cret")
		require.NoError(t, err)
		assert.Equal(t, uid, p.UID)
		_, err = auth.Authenticate(ctx, "auditor1", "wrong")
		assert.ErrorIs(t, err, identity.ErrBadCredentials)
		_, err = auth.Authenticate(ctx, "nobody", "s3cret")
		assert.ErrorIs(t, err, identity.ErrBadCredentials)

		current, stamp, err := auth.Current(ctx, "auditor1")
		require.NoError(t, err)
		assert.Equal(t, p, current, "Current reads the principal Authenticate returned")
		require.NoError(t, users.SetDisabled(ctx, "auditor1", true))
		_, _, err = auth.Current(ctx, "auditor1")
		assert.ErrorIs(t, err, identity.ErrBadCredentials, "disabled")
		require.NoError(t, users.SetDisabled(ctx, "auditor1", false))
		_, again, err := auth.Current(ctx, "auditor1")
		require.NoError(t, err)
		assert.Equal(t, stamp, again, "the same password hash, the same stamp")
		_, _, err = auth.Current(ctx, "nobody")
		assert.ErrorIs(t, err, identity.ErrBadCredentials)

		created, err := users.EnsureBootstrap(ctx, "admin", "pw", identity.RoleAdmin)
		require.NoError(t, err)
		assert.True(t, created)
		created, err = users.EnsureBootstrap(ctx, "admin", "other", identity.RoleAdmin)
		require.NoError(t, err)
		assert.False(t, created, "a second start must not replace the user")
		p, err = auth.Authenticate(ctx, "admin", "pw")
		require.NoError(t, err)
		assert.True(t, p.IsGlobalAdmin())
	})
}

func TestConcurrentBootstrapCreatesOneUser(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		db := dbtest.Open(t, d)
		users := identity.NewUsers(db)
		var wg sync.WaitGroup
		for i := 0; i < 5; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := users.EnsureBootstrap(context.Background(), "admin", "pw", identity.RoleAdmin)
				assert.NoError(t, err, "a concurrent bootstrap either creates the user or finds it")
			}()
		}
		wg.Wait()
		var n int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM users`).Scan(&n))
		assert.Equal(t, 1, n)
	})
}

func TestFailureLimiter(t *testing.T) {
	l := identity.NewFailureLimiter(10, 50, time.Minute)
	for i := 0; i < 9; i++ {
		l.Fail("10.0.0.1", "bob")
	}
	assert.False(t, l.Blocked("10.0.0.1", "bob"), "9 failures; want not blocked")
	l.Fail("10.0.0.1", "bob")
	assert.True(t, l.Blocked("10.0.0.1", "bob"), "10 failures; want blocked")
	assert.False(t, l.Blocked("10.0.0.2", "bob"), "another IP is not blocked")
	assert.False(t, l.Blocked("10.0.0.1", "alice"), "another user is not blocked")
	l.Succeed("10.0.0.1", "bob")
	assert.False(t, l.Blocked("10.0.0.1", "bob"))
}

func TestFailureLimiterSurvivesAFloodOfNames(t *testing.T) {
	l := identity.NewFailureLimiter(10, 50, time.Minute)
	for i := 0; i < 10; i++ {
		l.Fail("192.0.2.1", "alice")
	}
	require.True(t, l.Blocked("192.0.2.1", "alice"))
	for i := 0; i <= identity.DefaultLimiterCapacity; i++ { // 100,001 distinct unknown names
		l.Fail(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), fmt.Sprintf("nobody-%d", i))
	}
	assert.True(t, l.Blocked("192.0.2.1", "alice"), "a flood of unknown names lifted the limit on a real user")
}

func TestFailureLimiterLimitsOneIPAcrossNames(t *testing.T) {
	l := identity.NewFailureLimiter(10, 50, time.Minute)
	for i := 0; i < 49; i++ {
		l.Fail("192.0.2.9", fmt.Sprintf("guess-%d", i))
	}
	assert.False(t, l.Blocked("192.0.2.9", "another"), "49 failures of the IP; want not blocked")
	l.Fail("192.0.2.9", "guess-49")
	assert.True(t, l.Blocked("192.0.2.9", "another"), "50 failures of the IP with 50 names; want blocked for every name")
	assert.False(t, l.Blocked("192.0.2.10", "another"), "another IP is not blocked")
	l.Succeed("192.0.2.9", "guess-1")
	assert.True(t, l.Blocked("192.0.2.9", "another"), "one success does not lift the IP's limit")
}

func TestParseRole(t *testing.T) {
	for in, want := range map[string]identity.Role{"admin": identity.RoleAdmin, "Auditor": identity.RoleAuditor, "user": identity.RoleUser} {
		got, err := identity.ParseRole(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := identity.ParseRole("root")
	assert.Error(t, err)
}

func TestRoleAndDisabledTakeEffectAtOnce(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		users := identity.NewUsers(dbtest.Open(t, d))
		hash, err := identity.HashPassword("s3cret")
		require.NoError(t, err)
		_, err = users.Add(ctx, identity.User{Username: "boss", Domain: identity.LocalDomain, PasswordHash: hash, Role: identity.RoleAdmin})
		require.NoError(t, err)
		auth := identity.NewAuthenticator(users)
		p, err := auth.Authenticate(ctx, "boss", "s3cret")
		require.NoError(t, err)
		require.Equal(t, identity.RoleAdmin, p.Role)

		require.NoError(t, users.SetRole(ctx, "boss", identity.RoleUser))
		p, err = auth.Authenticate(ctx, "boss", "s3cret")
		require.NoError(t, err)
		assert.Equal(t, identity.RoleUser, p.Role, "got the cached role; want the demoted one at once")

		require.NoError(t, users.SetDisabled(ctx, "boss", true))
		_, err = auth.Authenticate(ctx, "boss", "s3cret")
		assert.ErrorIs(t, err, identity.ErrBadCredentials, "a disabled user is refused at once")
		require.NoError(t, users.SetDisabled(ctx, "boss", true), "disabling twice changes nothing")

		require.NoError(t, users.SetDisabled(ctx, "boss", false))
		_, err = auth.Authenticate(ctx, "boss", "s3cret")
		assert.NoError(t, err, "enabling restores the old password")
		assert.ErrorIs(t, users.SetRole(ctx, "ghost", identity.RoleUser), identity.ErrNoUser)
		assert.ErrorIs(t, users.SetDisabled(ctx, "ghost", true), identity.ErrNoUser)
	})
}
