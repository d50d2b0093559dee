package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/console"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// matrixUsers are the callers of every probe: a global administrator, an auditor and a
// customer administrator and a plain user of example.test, and an auditor of other.test
// (another tenant).
var matrixUsers = []string{adminUser, auditorUser, customerAdmin, plainUser, otherAuditor}

// matrixObjects are example.test's request, hold and message (the user's mail).
type matrixObjects struct {
	objects
	message int64
	export  string // a cancelled export of example.test
	admin   adminObjects
}

// probe is one request of the matrix and the status each caller gets; anonymous is the
// status without a session.
type probe struct {
	method    string
	path      func(matrixObjects) string
	form      url.Values
	want      map[string]int
	anonymous int
}

// Expected statuses, by who may reach what: every page needs a session (303 to the login
// form without); the archive is everybody's, scoped; compliance pages are for global
// administrators (every tenant) and auditors (their tenant); another tenant's object is
// 404, never 403. The global administrator reads the archive of the tenant "default"
// until they choose another in the tenant switch (these probes make no switch), so
// example.test's message is 404 to them.
var (
	everybody  = map[string]int{adminUser: 200, auditorUser: 200, customerAdmin: 200, plainUser: 200, otherAuditor: 200}
	compliance = map[string]int{adminUser: 200, auditorUser: 200, customerAdmin: 403, plainUser: 403, otherAuditor: 200}
	ownObject  = map[string]int{adminUser: 200, auditorUser: 200, customerAdmin: 403, plainUser: 403, otherAuditor: 404}
	ownMessage = map[string]int{adminUser: 404, auditorUser: 200, customerAdmin: 200, plainUser: 200, otherAuditor: 404}
	// Exports are the auditors' only, as in the API (/api/v1/ediscovery).
	exporters = map[string]int{adminUser: 403, auditorUser: 200, customerAdmin: 403, plainUser: 403, otherAuditor: 200}
	ownExport = map[string]int{adminUser: 403, auditorUser: 200, customerAdmin: 403, plainUser: 403, otherAuditor: 404}
	// A cancelled export neither downloads nor cancels again (409).
	exportConflict = map[string]int{adminUser: 403, auditorUser: 409, customerAdmin: 403, plainUser: 403, otherAuditor: 404}
)

func exportPath(suffix string) func(matrixObjects) string {
	return func(o matrixObjects) string { return "/compliance/exports/" + o.export + suffix }
}

func fixed(path string) func(matrixObjects) string { return func(matrixObjects) string { return path } }

func get(path func(matrixObjects) string, want map[string]int) probe {
	return probe{method: "GET", path: path, want: want, anonymous: 303}
}

func request(suffix string) func(matrixObjects) string {
	return func(o matrixObjects) string { return "/compliance/gdpr/" + o.request + suffix }
}

// consoleProbes lists, for every route of the console, its probes; a route without one
// fails TestConsoleRoleMatrix.
var consoleProbes = map[string][]probe{
	"/static/{file}":             {{method: "GET", path: fixed("/static/console.css"), want: everybody, anonymous: 200}},
	"/login":                     {{method: "GET", path: fixed("/login"), want: everybody, anonymous: 200}},
	"/logout":                    {{method: "POST", path: fixed("/logout"), want: map[string]int{adminUser: 303, auditorUser: 303, customerAdmin: 303, plainUser: 303, otherAuditor: 303}, anonymous: 303}},
	"/":                          {get(fixed("/"), everybody)},
	"/archive":                   {get(fixed("/archive?q=hello"), everybody)},
	"/archive/messages/{id}":     {get(func(o matrixObjects) string { return fmt.Sprintf("/archive/messages/%d", o.message) }, ownMessage)},
	"/archive/messages/{id}/raw": {get(func(o matrixObjects) string { return fmt.Sprintf("/archive/messages/%d/raw", o.message) }, ownMessage)},
	"/archive/messages/{id}/attachments/{seq}": {get(func(o matrixObjects) string {
		return fmt.Sprintf("/archive/messages/%d/attachments/1", o.message)
	}, ownMessage)},
	// Without a smarthost, a restore that may go ahead is 503; the others are 404 first.
	"/archive/messages/{id}/restore": {get(restore, ownMessage),
		{method: "POST", path: restore, form: url.Values{"to": {userAddress}},
			want: map[string]int{adminUser: 404, auditorUser: 503, customerAdmin: 503, plainUser: 503, otherAuditor: 404}, anonymous: 303}},
	"/tenant": {{method: "POST", path: fixed("/tenant"), form: url.Values{"tenant": {tenant}},
		want: map[string]int{adminUser: 303, auditorUser: 403, customerAdmin: 403, plainUser: 403, otherAuditor: 403}, anonymous: 303}},
	"/compliance/gdpr": {get(fixed("/compliance/gdpr"), compliance)},
	"/compliance/gdpr/new": {get(fixed("/compliance/gdpr/new"), compliance),
		{method: "POST", path: fixed("/compliance/gdpr/new"), form: url.Values{"email_addresses": {"x@example.test"}},
			want: map[string]int{adminUser: 303, auditorUser: 303, customerAdmin: 403, plainUser: 403, otherAuditor: 303}, anonymous: 303}},
	"/compliance/gdpr/{request_id}": {get(request(""), ownObject)},
	"/compliance/gdpr/{request_id}/{action:approve|reject|execute}": {get(request("/approve"), ownObject),
		get(request("/execute"), ownObject),
		{method: "POST", path: request("/execute"), want: map[string]int{adminUser: 409, auditorUser: 409, customerAdmin: 403, plainUser: 403, otherAuditor: 404}, anonymous: 303}},
	"/compliance/gdpr/{request_id}/extend": {{method: "POST", path: request("/extend"), form: url.Values{"due_at": {"2000-01-01"}, "reason": {"probe"}},
		want: map[string]int{adminUser: 400, auditorUser: 400, customerAdmin: 403, plainUser: 403, otherAuditor: 404}, anonymous: 303}},
	"/compliance/gdpr/{request_id}/certificate":        {get(request("/certificate"), notCompleted)},
	"/compliance/gdpr/{request_id}/certificate/pdf":    {get(request("/certificate/pdf"), notCompleted)},
	"/compliance/gdpr/{request_id}/certificate/bundle": {get(request("/certificate/bundle"), notCompleted)},
	"/compliance/holds":                                {get(fixed("/compliance/holds"), compliance)},
	"/compliance/holds/new":                            {get(fixed("/compliance/holds/new"), compliance)},
	"/compliance/holds/{id}/release":                   {get(func(o matrixObjects) string { return "/compliance/holds/" + o.hold + "/release" }, ownObject)},
	"/compliance/exports":                              {get(fixed("/compliance/exports"), exporters)},
	"/compliance/exports/new": {get(fixed("/compliance/exports/new"), exporters),
		{method: "POST", path: fixed("/compliance/exports/new"), form: url.Values{"bates_prefix": {"-"}},
			want: map[string]int{adminUser: 403, auditorUser: 400, customerAdmin: 403, plainUser: 403, otherAuditor: 400}, anonymous: 303}},
	"/compliance/exports/{job_id}":          {get(exportPath(""), ownExport)},
	"/compliance/exports/{job_id}/download": {get(exportPath("/download"), exportConflict)},
	"/compliance/exports/{job_id}/{action:cancel|delete}": {get(exportPath("/cancel"), ownExport), get(exportPath("/delete"), ownExport),
		{method: "POST", path: exportPath("/cancel"), want: exportConflict, anonymous: 303}},
	"/ledger":        {get(fixed("/ledger"), everybody)},
	"/ledger/verify": {{method: "POST", path: fixed("/ledger/verify"), want: map[string]int{adminUser: 303, auditorUser: 303, customerAdmin: 403, plainUser: 403, otherAuditor: 303}, anonymous: 303}},
}

// Administration: global and customer administrators (app.Management.Admits); the
// service's own pages (new customer or domain, deleting one) for global administrators
// only. Groups and header checks are those of the site the console is reached at: the
// test server's host names no customer, so the global administrator works in "default"
// and example.test's group is 404 to them.
var (
	administrators = map[string]int{adminUser: 200, auditorUser: 403, customerAdmin: 200, plainUser: 403, otherAuditor: 403}
	serviceAdmin   = map[string]int{adminUser: 200, auditorUser: 403, customerAdmin: 403, plainUser: 403, otherAuditor: 403}
	siteObject     = map[string]int{adminUser: 404, auditorUser: 403, customerAdmin: 200, plainUser: 403, otherAuditor: 403}
	badForm        = map[string]int{adminUser: 400, auditorUser: 403, customerAdmin: 400, plainUser: 403, otherAuditor: 403}
)

func adminPath(format string, id func(adminObjects) string) func(matrixObjects) string {
	return func(o matrixObjects) string { return fmt.Sprintf(format, id(o.admin)) }
}

func init() {
	customer := func(a adminObjects) string { return a.customer }
	user := func(a adminObjects) string { return itoa(a.user) }
	group := func(a adminObjects) string { return a.group }
	check := func(a adminObjects) string { return a.check }
	post := func(path string, form url.Values, want map[string]int) probe {
		return probe{method: "POST", path: fixed(path), form: form, want: want, anonymous: 303}
	}
	for route, probes := range map[string][]probe{
		"/admin":                           {get(fixed("/admin"), administrators)},
		"/admin/customers":                 {get(fixed("/admin/customers"), administrators)},
		"/admin/customers/new":             {get(fixed("/admin/customers/new"), serviceAdmin), post("/admin/customers/new", url.Values{"customer_id": {"!"}}, map[string]int{adminUser: 400, auditorUser: 403, customerAdmin: 403, plainUser: 403, otherAuditor: 403})},
		"/admin/customers/{id}/edit":       {get(adminPath("/admin/customers/%s/edit", customer), administrators)},
		"/admin/customers/{id}/delete":     {get(adminPath("/admin/customers/%s/delete", customer), serviceAdmin)},
		"/admin/domains":                   {get(fixed("/admin/domains"), administrators)},
		"/admin/domains/new":               {get(fixed("/admin/domains/new"), serviceAdmin)},
		"/admin/domains/{domain}/delete":   {get(fixed("/admin/domains/example.test/delete"), serviceAdmin)},
		"/admin/users":                     {get(fixed("/admin/users"), administrators)},
		"/admin/users/new":                 {get(fixed("/admin/users/new"), administrators), post("/admin/users/new", url.Values{"username": {"x"}, "domain": {tenant}}, badForm)},
		"/admin/users/{uid}/edit":          {get(adminPath("/admin/users/%s/edit", user), administrators)},
		"/admin/users/{uid}/delete":        {get(adminPath("/admin/users/%s/delete", user), administrators)},
		"/admin/groups":                    {get(fixed("/admin/groups"), administrators)},
		"/admin/groups/new":                {get(fixed("/admin/groups/new"), administrators), post("/admin/groups/new", url.Values{"groupname": {""}}, badForm)},
		"/admin/groups/{id}/edit":          {get(adminPath("/admin/groups/%s/edit", group), siteObject)},
		"/admin/groups/{id}/delete":        {get(adminPath("/admin/groups/%s/delete", group), siteObject)},
		"/admin/header-checks":             {get(fixed("/admin/header-checks"), administrators)},
		"/admin/header-checks/new":         {get(fixed("/admin/header-checks/new"), administrators), post("/admin/header-checks/new", url.Values{"pattern": {"("}, "tag": {"t"}}, badForm)},
		"/admin/header-checks/{id}/delete": {get(adminPath("/admin/header-checks/%s/delete", check), siteObject)},
	} {
		consoleProbes[route] = probes
	}
}

func restore(o matrixObjects) string { return fmt.Sprintf("/archive/messages/%d/restore", o.message) }

// notCompleted: the request has no certificate yet (409) for those who may see it.
var notCompleted = map[string]int{adminUser: 409, auditorUser: 409, customerAdmin: 403, plainUser: 403, otherAuditor: 404}

// TestConsoleRoleMatrix walks the console's router: every route must have probes, and
// each probe answers each caller as the table says, with nothing of example.test shown to
// the other tenant's auditor.
func TestConsoleRoleMatrix(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		o := matrixObjects{objects: f.makeObjects(tenant, "subject@example.test")}
		o.message = f.archiveMail(tenant, string(archivetest.WithAttachment("boss@example.test", userAddress, "hello user",
			"example secret words", "notes.txt", []byte("attached notes"), time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))))[0]
		o.export = f.cancelledExport(tenant, o.message)
		o.admin = f.makeAdminObjects()
		routes := console.RouteTemplates(f.console)
		for _, route := range routes {
			probes, ok := consoleProbes[route]
			if !assert.True(t, ok, "console route %s has no probe in the role matrix", route) {
				continue
			}
			for _, p := range probes {
				checkProbe(t, f, o, p)
			}
		}
		for route := range consoleProbes {
			assert.True(t, slices.Contains(routes, route), "the matrix probes %s, which the console does not serve", route)
		}
		assert.Equal(t, "pending_approval", f.status(tenant, o.request), "nothing changed the request")
		assert.Equal(t, "active", f.holdStatus(tenant, o.hold))
		assert.Equal(t, "cancelled", f.exportStatus(tenant, o.export))
	})
}

// checkProbe sends p as every caller (a fresh session each) and without a session.
func checkProbe(t *testing.T, f *fixture, o matrixObjects, p probe) {
	t.Helper()
	path := p.path(o)
	resp, _ := send(f.browser(), p.method, path, p.form)
	assert.Equal(t, p.anonymous, resp.StatusCode, "%s %s without a session", p.method, path)
	for _, user := range matrixUsers {
		b := f.login(user)
		form := url.Values{}
		for k, v := range p.form {
			form[k] = v
		}
		form.Set("csrf", b.csrf)
		resp, body := send(b, p.method, path, form)
		assert.Equal(t, p.want[user], resp.StatusCode, "%s %s as %s", p.method, path, user)
		if user == otherAuditor {
			for _, marker := range []string{o.request, o.hold, o.export, "example secret", "subject@example.test"} {
				assert.NotContains(t, body, marker, "%s %s as %s shows example.test's %q", p.method, path, user, marker)
			}
		}
	}
}

func send(b *browser, method, path string, form url.Values) (*http.Response, string) {
	if method == http.MethodPost {
		return b.post(path, form)
	}
	return b.get(path)
}

// TestCSRF: a POST without the session's token, or with another one, is 403 and changes
// nothing.
func TestCSRF(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		o := f.makeObjects(tenant, "subject@example.test")
		admin := f.login(adminUser)
		intruder := f.login(approverUser) // a valid token, of another session
		for _, tc := range []struct {
			path string
			form url.Values
		}{
			{"/compliance/gdpr/" + o.request + "/approve", nil},
			{"/compliance/gdpr/" + o.request + "/reject", url.Values{"reason": {"forged"}}},
			{"/compliance/holds/" + o.hold + "/release", nil},
			{"/compliance/gdpr/new", url.Values{"email_addresses": {"forged@example.test"}}},
			{"/compliance/holds/new", url.Values{"type": {"address"}, "value": {"forged@example.test"}, "reason": {"x"}}},
			{"/compliance/gdpr/" + o.request + "/extend", url.Values{"due_at": {"2099-01-01"}, "reason": {"forged"}}},
			{"/tenant", url.Values{"tenant": {otherTenant}}},
			{"/logout", nil},
		} {
			for name, token := range map[string]string{"missing": "", "wrong": strings.Repeat("A", 43), "another session's": intruder.csrf} {
				form := url.Values{}
				for k, v := range tc.form {
					form[k] = v
				}
				if token != "" {
					form.Set("csrf", token)
				}
				resp, body := admin.post(tc.path, form)
				assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s with a %s token", tc.path, name)
				assert.Contains(t, body, "CSRF")
			}
		}
		assert.Equal(t, "pending_approval", f.status(tenant, o.request))
		assert.Equal(t, "active", f.holdStatus(tenant, o.hold))
		_, page := admin.get("/compliance/gdpr")
		assert.NotContains(t, page, "forged@example.test")
		assert.Contains(t, page, o.request, "no forged tenant switch either")
		_, page = admin.get("/compliance/holds")
		assert.NotContains(t, page, "forged@example.test")
		resp, _ := admin.get("/")
		require.Equal(t, http.StatusOK, resp.StatusCode, "the session survived the forged logout")
	})
}
