package console_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/console"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// hostileHTML is a message whose HTML part tries to run script and load remote content.
const hostileHTML = "From: mallory@evil.example\r\nTo: user@example.test\r\nSubject: hostile html\r\n" +
	"Date: Tue, 24 Nov 2026 11:00:00 +0000\r\nMessage-ID: <hostile@test>\r\nMIME-Version: 1.0\r\n" +
	"Content-Type: text/html; charset=utf-8\r\n\r\n" +
	`<p>Hello <b>friend</b></p><script>alert("pwned")</script>` +
	`<img src="https://tracker.evil.example/pixel.gif?u=1" onerror="alert(1)" alt="pixel">` +
	`<img src="http://evil.example/a.png"><a href="javascript:alert(2)" onclick="alert(3)">click</a>` +
	`<div style="background:url(https://evil.example/bg.png)" onmouseover="alert(4)">styled</div>` +
	`<iframe src="https://evil.example/frame"></iframe><link rel="stylesheet" href="https://evil.example/x.css">` +
	`<a href="https://example.org/page">a link</a>` + "\r\n"

func TestMessageHTMLIsSanitised(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		id := f.archiveMail(tenant, hostileHTML)[0]
		resp, page := f.login(plainUser).get(fmt.Sprintf("/archive/messages/%d", id))
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, page, "<b>friend</b>", "harmless markup stays")
		assert.Contains(t, page, `href="https://example.org/page"`, "a plain link stays")
		for _, bad := range []string{"<script", "alert(", "onerror", "onclick", "onmouseover", "javascript:",
			"<iframe", "evil.example/", "style=\"background", "<link rel=\"stylesheet\" href=\"https"} {
			assert.NotContains(t, page, bad)
		}
		assert.NotRegexp(t, regexp.MustCompile(`src="https?:`), page, "no remote src left")
		assert.Contains(t, page, `src="/static/blocked-image.svg"`, "images replaced by the placeholder")
		assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "img-src 'self'")
	})
}

func TestSanitizerKeepsNoRemoteSource(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`<img src="//evil.example/x.png">`, `<img srcset="https://evil.example/x.png 1x">`,
		`<video src="https://evil.example/v.mp4" poster="https://evil.example/p.png"></video>`,
		`<audio src="https://evil.example/a.mp3"></audio>`, `<object data="https://evil.example/o"></object>`,
		`<svg><image href="https://evil.example/i.png"/></svg>`, `<body background="https://evil.example/b.png">x</body>`,
		`<img src="cid:part1@example">`, `<img src="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=">`,
	} {
		out := console.SanitizeHTML(in)
		assert.NotContains(t, out, "evil.example", "%s → %s", in, out)
		assert.NotContains(t, out, "data:", "%s → %s", in, out)
	}
}

func TestSearchAndPaging(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		var raws []string
		for i := 0; i < 30; i++ {
			raws = append(raws, mail("boss@example.test", userAddress, fmt.Sprintf("quarterly report %02d", i), "numbers inside"))
		}
		raws = append(raws, mail("boss@example.test", "someone@example.test", "quarterly secret", "numbers inside"))
		f.archiveMail(tenant, raws...)
		f.archiveMail(otherTenant, mail("x@other.test", userAddress, "quarterly other tenant", "numbers inside"))
		before := f.countEvents(app.EventMessagesSearched)

		b := f.login(plainUser)
		resp, page := b.get("/archive?q=quarterly&from=boss%40example.test")
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, page, "1–25 of 30")
		assert.NotContains(t, page, "quarterly secret", "a user sees only their own mail")
		assert.NotContains(t, page, "other tenant")
		next := regexp.MustCompile(`href="(/archive\?[^"]+)" rel="next"`).FindStringSubmatch(page)
		require.NotNil(t, next, "a next-page link")
		_, page = b.get(strings.ReplaceAll(next[1], "&amp;", "&"))
		assert.Contains(t, page, "26–30 of 30")
		assert.Equal(t, before+2, f.countEvents(app.EventMessagesSearched), "each search is in the ledger")

		_, page = f.login(auditorUser).get("/archive?q=quarterly")
		assert.Contains(t, page, "of 31", "an auditor sees the tenant")
		assert.NotContains(t, page, "other tenant")

		resp, _ = b.get("/archive?date_from=yesterday")
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	})
}

func TestMessageVisibility(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		ids := f.archiveMail(tenant, mail("boss@example.test", userAddress, "for the user", "hello user"),
			mail("boss@example.test", "someone@example.test", "not for the user", "secret"))
		other := f.archiveMail(otherTenant, mail("x@other.test", "y@other.test", "other tenant mail", "theirs"))[0]
		mine, notMine := ids[0], ids[1]

		user := f.login(plainUser)
		resp, page := user.get(fmt.Sprintf("/archive/messages/%d", mine))
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, page, "hello user")
		resp, raw := user.get(fmt.Sprintf("/archive/messages/%d/raw", mine))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "message/rfc822", resp.Header.Get("Content-Type"))
		assert.Contains(t, raw, "Subject: for the user")

		for _, path := range []string{"/archive/messages/%d", "/archive/messages/%d/raw"} {
			for who, id := range map[string]int64{"someone else's": notMine, "another tenant's": other} {
				resp, page := user.get(fmt.Sprintf(path, id))
				assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s message via %s", who, path)
				assert.NotContains(t, page, "secret")
			}
			resp, _ := f.login(auditorUser).get(fmt.Sprintf(path, other))
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, "an auditor, another tenant's message via %s", path)
			resp, _ = f.login(noMailUser).get(fmt.Sprintf(path, mine))
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, "a user without an address via %s", path)
		}
		resp, _ = user.get("/archive/messages/abc")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
}
