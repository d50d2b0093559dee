package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/identity"
)

func TestUserAddCommand(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		env := baseEnv(t)
		if d != database.SQLite {
			env["DATABASE_URL"] = dbtest.URL(t, d)
		}
		const secret = "Tr0ub4dor&3-secret"
		r := runBinary(t, env, "user", "add", "--username", "carol", "--password", secret, "--role", "auditor",
			"--email", "Carol@Example.TEST", "--domain", "Example.test")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Regexp(t, `^created user carol: uid \d+, role auditor, domain example.test\n$`, r.stdout)

		u := readUser(t, env, "carol")
		assert.Equal(t, identity.RoleAuditor, u.Role)
		assert.Equal(t, "carol@example.test", u.Email)
		assert.Equal(t, "example.test", u.Domain)
		assert.NotContains(t, u.PasswordHash, secret)
		assert.NoError(t, bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(secret)), "stored as a bcrypt hash")

		again := runBinary(t, env, "user", "add", "--username", "carol", "--password", "x", "--role", "user")
		require.Equal(t, 1, again.code, "a taken name: %s", again.stderr)
		assert.Equal(t, "mailledger: user \"carol\" already exists\n", again.stderr)
		for _, out := range []string{r.stdout, r.stderr, again.stdout, again.stderr} {
			assert.NotContains(t, out, secret, "the password is never printed")
		}
		plain := runBinary(t, env, "user", "add", "--username", "dave", "--password", "pw", "--role", "user")
		require.Equal(t, 0, plain.code, plain.stderr)
		assert.Equal(t, identity.LocalDomain, readUser(t, env, "dave").Domain, "the default domain is local")
	})
}

func TestUserAddRejectsBadArguments(t *testing.T) {
	env := baseEnv(t)
	cases := []struct {
		args    []string
		mention string
	}{
		{[]string{"user"}, "usage: mailledger user add"},
		{[]string{"user", "remove", "--username", "x"}, `unknown command "user remove"; did you mean "user add"?`},
		{[]string{"user", "add", "--password", "pw", "--role", "user"}, "--username is required"},
		{[]string{"user", "add", "--username", "x", "--role", "user"}, "--password is required"},
		{[]string{"user", "add", "--username", "x", "--password", "pw"}, "--role"},
		{[]string{"user", "add", "--username", "x", "--password", "pw", "--role", "root"}, `unknown role "root"`},
		{[]string{"user", "add", "--username", "x", "--password", "pw", "--role", "user", "--email", "not-an-address"}, "--email"},
		{[]string{"user", "add", "--username", "x", "--password", "pw", "--role", "user", "--domain", "a b"}, "--domain"},
		{[]string{"user", "add", "--username", "x", "--password", "pw", "--role", "user", "extra"}, "unexpected arguments"},
		{[]string{"user", "add", "--username", "x", "--password", "pw", "--role", "user", "--shell", "sh"}, "flag provided but not defined"},
	}
	for _, tc := range cases {
		r := runBinary(t, env, tc.args...)
		require.Equal(t, 2, r.code, "%v: %s", tc.args, r.stderr)
		last := lastLine(r.stderr)
		assert.True(t, strings.HasPrefix(last, "mailledger: "), "%v: %q", tc.args, last)
		assert.Contains(t, last, tc.mention, "%v", tc.args)
		assert.NotContains(t, r.stderr, "pw\n", "%v: the password is never printed", tc.args)
	}
}

func TestServeCreatesBootstrapUsers(t *testing.T) {
	env := baseEnv(t)
	env["MAILLEDGER_BOOTSTRAP_AUDITOR"] = "first-auditor:aud1tor-pass"
	added := runBinary(t, env, "user", "add", "--username", testAdmin, "--password", "chosen-by-hand", "--role", "admin")
	require.Equal(t, 0, added.code, added.stderr)

	s := startServe(t, env)
	s.waitFor("/readyz", http.StatusOK, 60*time.Second)
	const path = "/api/v1/admin/legal-holds"
	assert.Equal(t, http.StatusOK, callStatus(t, s, path, "first-auditor", "aud1tor-pass"), "the bootstrap auditor exists")
	assert.Equal(t, http.StatusOK, callStatus(t, s, path, testAdmin, "chosen-by-hand"), "an existing user is kept")
	assert.Equal(t, http.StatusUnauthorized, callStatus(t, s, path, testAdmin, testPassword), "and not given the bootstrap password")
	s.stop(10 * time.Second)
	logs := strings.Join(s.logLines(), "\n")
	assert.Contains(t, logs, `"msg":"created bootstrap user","user":"first-auditor","role":"auditor"`)
	assert.NotContains(t, logs, `"user":"`+testAdmin+`","role":"admin"`)
	for _, secret := range []string{"aud1tor-pass", "chosen-by-hand", testPassword, "$2a$"} {
		assert.NotContains(t, logs, secret, "no password or hash in the logs")
	}
}

// callStatus requests path with Basic credentials and returns the status.
func callStatus(t *testing.T, s *server, path, user, pass string) int {
	t.Helper()
	status, _, _ := call(t, s, http.MethodGet, path, user, pass, "")
	return status
}

// call requests path with Basic credentials and an optional JSON body.
func call(t *testing.T, s *server, method, path, user, pass, body string) (int, []byte, http.Header) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, strings.NewReader(body))
	require.NoError(t, err)
	req.SetBasicAuth(user, pass)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw, resp.Header
}

// readUser reads a user from the database of env.
func readUser(t *testing.T, env map[string]string, name string) *identity.User {
	t.Helper()
	store, _ := openLedger(t, env)
	u, err := identity.NewUsers(store.DB()).ByUsername(context.Background(), name)
	require.NoError(t, err)
	return u
}
