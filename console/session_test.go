package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/console"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/handlers"
)

func TestLogin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	b := f.browser()
	resp, _ := b.get("/archive?q=x")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "a page without a session")
	assert.Equal(t, "/login?next="+url.QueryEscape("/archive?q=x"), resp.Header.Get("Location"))

	resp, body := b.post("/login", url.Values{"username": {plainUser}, "password": {"wrong"}})
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, body, "Wrong user name or password")
	assert.Empty(t, resp.Cookies(), "no session after a failed login")

	resp, _ = b.post("/login", url.Values{"username": {plainUser}, "password": {password}, "next": {"/archive?q=x"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/archive?q=x", resp.Header.Get("Location"))
	ck := sessionCookie(t, resp)
	assert.True(t, ck.HttpOnly, "HttpOnly")
	assert.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	assert.Equal(t, "/", ck.Path)
	assert.False(t, ck.Secure, "not Secure over plain HTTP")
	assert.Len(t, ck.Value, 43, "256 random bits, base64url")

	resp, body = b.get("/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "Welcome, "+plainUser)
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
}

func TestLoginRedirectStaysOnSite(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example"} {
		resp, _ := f.browser().post("/login", url.Values{"username": {plainUser}, "password": {password}, "next": {next}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, "/", resp.Header.Get("Location"), "next=%s", next)
	}
}

func sessionCookie(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, ck := range resp.Cookies() {
		if ck.Name == console.CookieName {
			return ck
		}
	}
	t.Fatalf("no %s cookie in %v", console.CookieName, resp.Header["Set-Cookie"])
	return nil
}

// TestLoginThrottling: the form counts failures in the API's limiter, so that the form and
// HTTP Basic share one limit.
func TestLoginThrottling(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	b := f.browser()
	for i := 0; i < handlers.MaxLoginFailures; i++ {
		resp, _ := b.post("/login", url.Values{"username": {auditorUser}, "password": {"wrong"}})
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "attempt %d", i+1)
	}
	resp, body := b.post("/login", url.Values{"username": {auditorUser}, "password": {password}})
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "the right password after the limit")
	assert.Contains(t, body, "Too many failed logins")

	req, err := http.NewRequest(http.MethodGet, f.http.URL+"/api/v1/admin/legal-holds", nil)
	require.NoError(t, err)
	req.SetBasicAuth(auditorUser, password)
	api, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	api.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, api.StatusCode, "HTTP Basic shares the form's count")
}

func TestSessionIdleExpiry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	b := f.login(plainUser)
	f.clock.advance(idle - time.Second)
	resp, _ := b.get("/archive")
	require.Equal(t, http.StatusOK, resp.StatusCode, "used within the idle time")
	f.clock.advance(idle - time.Second)
	resp, _ = b.get("/archive")
	require.Equal(t, http.StatusOK, resp.StatusCode, "each use restarts the idle time")
	f.clock.advance(idle)
	resp, _ = b.get("/archive")
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "idle too long")
	assert.True(t, strings.HasPrefix(resp.Header.Get("Location"), "/login"))
}

func TestLogout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	b := f.login(plainUser)
	stolen := b.c.Jar.Cookies(mustURL(t, f.http.URL))
	resp, _ := b.post("/logout", url.Values{})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "logout needs the CSRF token")
	resp, _ = b.submit("/logout", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, -1, sessionCookie(t, resp).MaxAge, "the cookie is deleted")

	again := f.browser()
	again.c.Jar.SetCookies(mustURL(t, f.http.URL), stolen)
	resp, _ = again.get("/archive")
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "the old session id is dead on the server")
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u
}

func TestSecureCookieOverTLS(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	tlsServer := httptest.NewTLSServer(f.http.Config.Handler)
	t.Cleanup(tlsServer.Close)
	c := tlsServer.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.PostForm(tlsServer.URL+"/login", url.Values{"username": {plainUser}, "password": {password}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.True(t, sessionCookie(t, resp).Secure, "Secure over TLS")
}

func TestLoginFromAnotherSiteIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	req, err := http.NewRequest(http.MethodPost, f.http.URL+"/login",
		strings.NewReader(url.Values{"username": {plainUser}, "password": {password}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := f.browser().c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Empty(t, resp.Cookies())
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	req, err := http.NewRequest(http.MethodDelete, f.http.URL+"/login", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, HEAD, POST", resp.Header.Get("Allow"))
}
