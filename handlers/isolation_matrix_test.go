package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
)

// The tenant-isolation matrix: with MULTITENANCY=1 and three customers, acme (with mail of
// its own), beta (whose objects are the targets) and gamma (which holds nothing), every
// caller of acme and of gamma (a user, an auditor, the customer's administrator, each at
// its customer's host) tries every /api/v1 route against beta's objects. An object of
// beta is never read, changed or counted: the answer is 403 (the role may not use the
// route) or 404 (beta's object does not exist for the caller), a list or a creation never
// shows anything of beta, and gamma's lists count nothing. The routes come from the router
// itself: a route without a probe fails the test.

// Beta's objects and users, made as beta's own callers would make them.
type betaObjects struct {
	message              int64
	hold, request, job   string
	retention            string
	customerID           string // beta's numeric customer id
	group, headerCheck   string
	userUID              int64
	userName, subjectOne string
}

// isolationProbe is one request of the matrix. listing: the route answers with acme's
// own data (a list, a creation in acme, the shared ledger), so it may succeed but must
// show nothing of beta; otherwise it names one of beta's objects and must be refused.
type isolationProbe struct {
	method  string
	path    func(b betaObjects) string
	body    func(b betaObjects) string
	listing bool
	// invalid: 400 is also a refusal (the body names what acme cannot name, e.g. a user
	// of beta's domain).
	invalid bool
	// likeMissing: the route may accept the request, but its answer must be the one for an
	// object that exists nowhere (missing gives that request's body): nothing tells the
	// caller that beta's object exists.
	likeMissing func(b betaObjects) string
}

func get(path string) isolationProbe {
	return isolationProbe{method: "GET", path: fixed2(path), listing: true}
}

func fixed2(path string) func(betaObjects) string { return func(betaObjects) string { return path } }

func noBody(betaObjects) string { return "" }

func onMessage(method, view string) isolationProbe {
	return isolationProbe{method: method, path: func(b betaObjects) string { return fmt.Sprintf("/api/v1/messages/%d%s", b.message, view) },
		body: func(betaObjects) string { return `{"to":"` + acmeUser + `"}` }}
}

func onHold(method, view string) isolationProbe {
	return isolationProbe{method: method, path: func(b betaObjects) string { return holdsPath + "/" + b.hold + view }, body: noBody}
}

func onRequest(method, view, body string) isolationProbe {
	return isolationProbe{method: method, path: func(b betaObjects) string { return gdprPath + "/" + b.request + view },
		body: func(betaObjects) string { return body }}
}

func onJob(method, view string) isolationProbe {
	return isolationProbe{method: method, path: func(b betaObjects) string { return exportsPath + "/" + b.job + view }, body: noBody}
}

// write is a management write whose element names one of beta's objects.
func write(call string, element func(b betaObjects) string) isolationProbe {
	return isolationProbe{method: "POST", path: fixed2("/api/v1/" + call), body: func(b betaObjects) string { return "[" + element(b) + "]" }}
}

// own is a creation in acme's tenant: it may succeed, and shows nothing of beta.
func own(path, body string) isolationProbe {
	return isolationProbe{method: "POST", path: fixed2(path), body: func(betaObjects) string { return body }, listing: true}
}

// isolationProbes are the probes of each route template, by the router's template.
var isolationProbes = map[string][]isolationProbe{
	"/api/v1/ledger/public-key":  {get("/api/v1/ledger/public-key")},
	"/api/v1/ledger/checkpoint":  {get("/api/v1/ledger/checkpoint")},
	"/api/v1/ledger/proof":       {get("/api/v1/ledger/proof?position=1")},
	"/api/v1/ledger/consistency": {get("/api/v1/ledger/consistency?from=1&to=2")},
	"/api/v1/ledger/events": {get("/api/v1/ledger/events?limit=1000"), get("/api/v1/ledger/events?type=legalhold.placed"),
		{method: "GET", path: fixed2("/api/v1/ledger/events?tenant=beta")}},
	"/api/v1/messages": {get("/api/v1/messages"), get("/api/v1/messages?q=plans"),
		{method: "GET", path: fixed2("/api/v1/messages?tenant=beta")}},
	"/api/v1/messages/{id}":         {onMessage("GET", "")},
	"/api/v1/messages/{id}/raw":     {onMessage("GET", "/raw")},
	"/api/v1/messages/{id}/text":    {onMessage("GET", "/text")},
	"/api/v1/messages/{id}/restore": {onMessage("POST", "/restore")},
	"/api/v1/admin/legal-holds": {get(holdsPath), {method: "GET", path: fixed2(holdsPath + "?tenant=beta")},
		own(holdsPath, `{"type":"address","value":"someone@acme.test","reason":"matter","matter":"A-1"}`)},
	"/api/v1/admin/legal-holds/{id}":         {onHold("GET", "")},
	"/api/v1/admin/legal-holds/{id}/release": {onHold("POST", "/release")},
	"/api/v1/admin/gdpr/requests": {get(gdprPath), {method: "GET", path: fixed2(gdprPath + "?tenant=beta")},
		own(gdprPath, `{"email_addresses":["someone@acme.test"],"requester_name":"A"}`)},
	"/api/v1/admin/gdpr/requests/{request_id}":                    {onRequest("GET", "", "")},
	"/api/v1/admin/gdpr/requests/{request_id}/assess":             {onRequest("POST", "/assess", "")},
	"/api/v1/admin/gdpr/requests/{request_id}/approve":            {onRequest("POST", "/approve", `{"reason":"ok"}`)},
	"/api/v1/admin/gdpr/requests/{request_id}/reject":             {onRequest("POST", "/reject", `{"reason":"no"}`)},
	"/api/v1/admin/gdpr/requests/{request_id}/execute":            {onRequest("POST", "/execute", "")},
	"/api/v1/admin/gdpr/requests/{request_id}/audit":              {onRequest("GET", "/audit", "")},
	"/api/v1/admin/gdpr/requests/{request_id}/history":            {onRequest("GET", "/history", "")},
	"/api/v1/admin/gdpr/requests/{request_id}/extend":             {onRequest("POST", "/extend", `{"due_at":"2026-12-31","reason":"taken over"}`)},
	"/api/v1/admin/gdpr/requests/{request_id}/certificate":        {onRequest("GET", "/certificate", "")},
	"/api/v1/admin/gdpr/requests/{request_id}/certificate/pdf":    {onRequest("GET", "/certificate/pdf", "")},
	"/api/v1/admin/gdpr/requests/{request_id}/certificate/bundle": {onRequest("GET", "/certificate/bundle", "")},
	"/api/v1/admin/retention-rules": {get(retentionRulesPath), {method: "GET", path: fixed2(retentionRulesPath + "?tenant=beta")},
		own(retentionRulesPath, `{"kind":"domain","value":"acme.test","days":400}`)},
	"/api/v1/admin/retention-rules/{id}": {
		{method: "GET", path: func(b betaObjects) string { return retentionRulesPath + "/" + b.retention }, body: noBody},
		{method: "DELETE", path: func(b betaObjects) string { return retentionRulesPath + "/" + b.retention }, body: noBody}},
	"/api/v1/ediscovery/export": {{method: "POST", path: fixed2("/api/v1/ediscovery/export"),
		body:        func(b betaObjects) string { return exportOf("ACME", b.message) },
		likeMissing: func(betaObjects) string { return exportOf("ACMX", 987654321) }}},
	"/api/v1/ediscovery/exports":                   {get(exportsPath)},
	"/api/v1/ediscovery/exports/{job_id}":          {onJob("GET", ""), onJob("DELETE", "")},
	"/api/v1/ediscovery/exports/{job_id}/cancel":   {onJob("POST", "/cancel")},
	"/api/v1/ediscovery/exports/{job_id}/download": {onJob("GET", "/download")},
	"/api/v1/ediscovery/bates-prefixes":            {get("/api/v1/ediscovery/bates-prefixes")},
	"/api/v1/admin/ediscovery/exports": {get("/api/v1/admin/ediscovery/exports"),
		{method: "GET", path: fixed2("/api/v1/admin/ediscovery/exports?tenant=beta")}},
	"/api/v1/admin/ediscovery/bates-prefixes": {get("/api/v1/admin/ediscovery/bates-prefixes"),
		{method: "GET", path: fixed2("/api/v1/admin/ediscovery/bates-prefixes?tenant=beta")}},
	"/api/v1/get_domains":       {get("/api/v1/get_domains")},
	"/api/v1/add_domain":        {own("/api/v1/add_domain", `[{"domain":"more.acme.test"}]`)},
	"/api/v1/delete_domain":     {write("delete_domain", func(betaObjects) string { return `{"domain":"beta.test"}` })},
	"/api/v1/get_customers":     {get("/api/v1/get_customers")},
	"/api/v1/get_customer_list": {get("/api/v1/get_customer_list")},
	"/api/v1/get_customer_list/id/{id}": {{method: "GET", body: noBody,
		path: func(b betaObjects) string { return "/api/v1/get_customer_list/id/" + b.customerID }}},
	"/api/v1/add_customer": {own("/api/v1/add_customer", "["+customerBody("delta", "delta.test", "archive.delta.test")+"]")},
	"/api/v1/update_customer": {write("update_customer", func(betaObjects) string {
		return `{"customer_id":"beta","support_link":"https://acme.test/took-over"}`
	})},
	"/api/v1/delete_customer": {write("delete_customer", func(betaObjects) string { return `{"customer_id":"beta"}` })},
	"/api/v1/add_user": {{method: "POST", path: fixed2("/api/v1/add_user"), invalid: true, body: func(betaObjects) string {
		return fmt.Sprintf(`[{"username":"intruder@beta.test","realname":"I","email":"intruder@beta.test","domain":"beta.test","password":%q,"isadmin":"1"}]`, testHash())
	}}},
	"/api/v1/update_user": {write("update_user", func(b betaObjects) string {
		return fmt.Sprintf(`{"uid":%d,"username":%q,"realname":"Taken","email":%q,"domain":"beta.test","password":"","isadmin":"1"}`, b.userUID, b.userName, b.userName)
	})},
	"/api/v1/delete_user": {write("delete_user", func(b betaObjects) string { return fmt.Sprintf(`{"uid":%d}`, b.userUID) })},
	"/api/v1/get_groups":  {get("/api/v1/get_groups")},
	"/api/v1/get_group":   {write("get_group", func(b betaObjects) string { return `{"id":"` + b.group + `"}` })},
	"/api/v1/add_group":   {own("/api/v1/add_group", `[{"groupname":"acme-group","email":"a@acme.test","assigned_email":"b@acme.test"}]`)},
	"/api/v1/update_group": {write("update_group", func(b betaObjects) string {
		return `{"id":"` + b.group + `","groupname":"taken","email":"x@acme.test","assigned_email":""}`
	})},
	"/api/v1/delete_group":        {write("delete_group", func(b betaObjects) string { return `{"id":"` + b.group + `"}` })},
	"/api/v1/get_header_checks":   {get("/api/v1/get_header_checks")},
	"/api/v1/add_header_check":    {own("/api/v1/add_header_check", `[{"pattern":"acme-pattern","tag":"acme"}]`)},
	"/api/v1/delete_header_check": {write("delete_header_check", func(b betaObjects) string { return `{"id":"` + b.headerCheck + `"}` })},
}

// gamma is a third customer that holds nothing: what its callers count must be zero.
const (
	gammaHost    = "archive.gamma.test"
	gammaAdmin   = "admin@gamma.test"
	gammaAuditor = "auditor@gamma.test"
	gammaUser    = "user@gamma.test"
)

// isolationCallers are the callers of acme (which holds mail of its own) and of gamma
// (which holds nothing), each at its customer's host.
var isolationCallers = []struct{ name, host string }{
	{acmeUser, acmeHost}, {acmeAuditor, acmeHost}, {acmeAdmin, acmeHost},
	{gammaUser, gammaHost}, {gammaAuditor, gammaHost}, {gammaAdmin, gammaHost},
}

func TestTenantIsolationMatrix(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d, func(o *handlers.Options) { o.Multitenancy = true })
		b := makeBeta(t, f)
		before := betaState(t, f, b)
		checkGammaCountsNothing(t, f.fixture) // before the probes, in which gamma's callers create objects of their own
		markers := []string{"beta secret plans", b.hold, b.job, b.retention, "beta-group", "beta-only-pattern", b.userName, "beta.test", b.subjectOne}
		routes := handlers.RouteTemplates(f.api)
		for _, route := range routes {
			if !strings.HasPrefix(route, "/api/v1/") {
				continue
			}
			probes, ok := isolationProbes[route]
			if !assert.True(t, ok, "route %s has no probe in the tenant-isolation matrix", route) {
				continue
			}
			for _, p := range probes {
				for _, caller := range isolationCallers {
					checkIsolated(t, f.fixture, b, p, caller.name, caller.host, markers)
				}
			}
		}
		for route := range isolationProbes {
			assert.True(t, slices.Contains(routes, route), "the matrix probes %s, which the router does not serve", route)
		}
		assert.Equal(t, before, betaState(t, f, b), "nothing of beta changed")
	})
}

// checkIsolated sends p as caller at acme's host and checks the answer.
func checkIsolated(t *testing.T, f *fixture, b betaObjects, p isolationProbe, caller, host string, markers []string) {
	t.Helper()
	path, body := p.path(b), ""
	if p.body != nil {
		body = p.body(b)
	}
	resp, raw := f.do(path, as(caller), withBody(p.method, body), func(r *http.Request) { r.Host = host })
	what := fmt.Sprintf("%s %s as %s: %d %s", p.method, path, caller, resp.StatusCode, raw)
	if p.listing {
		require.Contains(t, []int{200, 201, 202, 403}, resp.StatusCode, what)
		for _, m := range markers {
			require.NotContains(t, string(raw), m, "%s shows beta's %q", what, m)
		}
		return
	}
	if p.likeMissing != nil {
		missing, _ := f.do(path, as(caller), withBody(p.method, p.likeMissing(b)), func(r *http.Request) { r.Host = host })
		require.Equal(t, missing.StatusCode, resp.StatusCode, "%s: answered unlike an object that exists nowhere", what)
		for _, m := range markers {
			require.NotContains(t, string(raw), m, "%s shows beta's %q", what, m)
		}
		return
	}
	allowed := []int{403, 404}
	if p.invalid {
		allowed = append(allowed, 400)
	}
	require.Contains(t, allowed, resp.StatusCode, what)
}

// makeBeta creates the customers acme and beta and beta's objects, each as beta's own
// callers would.
func makeBeta(t *testing.T, f *exportFixture) betaObjects {
	t.Helper()
	f.mustWrite(adminUser, "add_customer", "["+customerBody("acme", "acme.test", acmeHost)+","+customerBody("beta", "beta.test", betaHost)+","+
		customerBody("gamma", "gamma.test", gammaHost)+"]", 3)
	f.addUser(gammaAuditor, identity.RoleAuditor, gammaAuditor, "gamma.test")
	f.addUser(gammaUser, identity.RoleUser, gammaUser, "gamma.test")
	f.addUser(acmeAuditor, identity.RoleAuditor, acmeAuditor, "acme.test")
	f.addUser(acmeUser, identity.RoleUser, acmeUser, "acme.test")
	f.addUser("auditor@beta.test", identity.RoleAuditor, "auditor@beta.test", "beta.test")
	f.addUser("betauser@beta.test", identity.RoleUser, "betauser@beta.test", "beta.test")
	b := betaObjects{userName: "betauser@beta.test", subjectOne: "subject@beta.test"}
	b.message = f.archiveMail("beta", archivetest.Message("boss@beta.test", []string{acmeUser, "betauser@beta.test"}, nil,
		"beta secret plans", "for beta's eyes", day))[0]
	f.archiveMail("acme", archivetest.Message("boss@acme.test", []string{acmeUser}, nil, "acme plans", "ours", day))
	b.hold = f.placeHold("auditor@beta.test", `{"type":"address","value":"custodian@beta.test","reason":"litigation","matter":"B-1"}`)
	resp, raw := f.postAs("auditor@beta.test", gdprPath, `{"email_addresses":["subject@beta.test"],"requester_name":"B"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", raw)
	var req requestJSON
	decode(t, raw, &req)
	b.request = req.RequestID
	resp, raw = f.postAs("auditor@beta.test", retentionRulesPath, `{"kind":"recipient","value":"keep@beta.test","days":3650}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", raw)
	var rule retentionRuleJSON
	decode(t, raw, &rule)
	b.retention = rule.ID
	b.job = f.createExport("auditor@beta.test", map[string]any{"bates_prefix": "BETA", "email_ids": []int64{b.message}}).JobID
	f.mustWriteAt(betaAdmin, "add_group", `[{"groupname":"beta-group","email":"a@beta.test","assigned_email":"b@beta.test"}]`, betaHost, 1)
	f.mustWriteAt(betaAdmin, "add_header_check", `[{"pattern":"beta-only-pattern","tag":"beta"}]`, betaHost, 1)
	b.group = fmt.Sprint(f.readArray(betaAdmin, "get_groups", betaHost)[0]["id"])
	b.headerCheck = fmt.Sprint(f.readArray(betaAdmin, "get_header_checks", betaHost)[0]["id"])
	for _, c := range f.readArray(adminUser, "get_customer_list", "") {
		if c["customer_id"] == "beta" {
			b.customerID = fmt.Sprint(c["id"])
		}
	}
	require.NotEmpty(t, b.customerID)
	require.NoError(t, f.db.QueryRow(f.db.Rebind(`SELECT uid FROM users WHERE username = ?`), b.userName).Scan(&b.userUID))
	return b
}

// betaState is what beta's own callers see of their objects.
func betaState(t *testing.T, f *exportFixture, b betaObjects) string {
	t.Helper()
	var parts []string
	for _, read := range []struct{ user, path, host string }{
		{"auditor@beta.test", fmt.Sprintf("/api/v1/messages/%d", b.message), ""},
		{"auditor@beta.test", holdsPath + "/" + b.hold, ""},
		{"auditor@beta.test", gdprPath + "/" + b.request, ""},
		{"auditor@beta.test", retentionRulesPath + "/" + b.retention, ""},
		{betaAdmin, "/api/v1/get_groups", betaHost},
		{betaAdmin, "/api/v1/get_header_checks", betaHost},
		{adminUser, "/api/v1/get_customer_list/id/" + b.customerID, ""},
		{adminUser, "/api/v1/get_domains", ""},
	} {
		resp, raw := f.read(read.user, strings.TrimPrefix(read.path, "/api/v1/"), read.host)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s reads %s: %s", read.user, read.path, raw)
		parts = append(parts, canonical(t, raw))
	}
	var users int
	require.NoError(t, f.db.QueryRow(f.db.Rebind(`SELECT COUNT(*) FROM users WHERE domain = ? AND realname <> ?`), "beta.test", "Taken").Scan(&users))
	parts = append(parts, fmt.Sprint("users ", users))
	job := f.getExport("auditor@beta.test", b.job)
	return strings.Join(append(parts, "job "+job.JobID+" "+job.Status), "\n")
}

// canonical is a JSON answer re-encoded, so that two reads compare as strings.
func canonical(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return string(out)
}

// exportOf is an export request of the message ids under prefix.
func exportOf(prefix string, ids ...int64) string {
	raw, _ := json.Marshal(map[string]any{"bates_prefix": prefix, "email_ids": ids})
	return string(raw)
}

// checkGammaCountsNothing: gamma's auditor, whose customer holds nothing, counts nothing
// in any list: beta's objects are not even counted for another customer.
func checkGammaCountsNothing(t *testing.T, f *fixture) {
	t.Helper()
	for path, field := range map[string]string{
		"/api/v1/messages": "messages",
		holdsPath:          "legal_holds",
		gdprPath:           "requests",
		exportsPath:        "exports",
		retentionRulesPath: "retention_rules",
	} {
		resp, raw := f.do(path, as(gammaAuditor), func(r *http.Request) { r.Host = gammaHost })
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, raw)
		var body map[string]json.RawMessage
		decode(t, raw, &body)
		var items []json.RawMessage
		require.NoError(t, json.Unmarshal(body[field], &items), "%s: %s", path, raw)
		assert.Empty(t, items, "%s: gamma holds nothing, and counts nothing: %s", path, raw)
		if total, ok := body["total"]; ok {
			assert.Equal(t, "0", string(total), "%s: the total counts only gamma's", path)
		}
	}
	resp, raw := f.do("/api/v1/ledger/events?limit=1000", as(gammaAuditor), func(r *http.Request) { r.Host = gammaHost })
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	var page eventsPage
	decode(t, raw, &page)
	for _, e := range page.Events {
		assert.Equal(t, "gamma", e.TenantID, "gamma's ledger events are gamma's own (its customer record): %+v", e)
	}
}
