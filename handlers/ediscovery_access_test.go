package handlers_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
)

// exportRoute is one eDiscovery route, {id} standing for a job id, with what an auditor
// gets on a completed job of their tenant.
type exportRoute struct {
	method, path, body string
	auditor            int
}

// auditorRoutes are the seven routes of /api/v1/ediscovery; the delete comes last, since
// it removes the job.
var auditorRoutes = []exportRoute{
	{"POST", exportPath, `{"bates_prefix":"ROLES","email_ids":[1]}`, http.StatusCreated},
	{"GET", exportsPath, "", http.StatusOK},
	{"GET", exportsPath + "/{id}", "", http.StatusOK},
	{"POST", exportsPath + "/{id}/cancel", "", http.StatusConflict},
	{"GET", exportsPath + "/{id}/download", "", http.StatusOK},
	{"GET", prefixesPath, "", http.StatusOK},
	{"DELETE", exportsPath + "/{id}", "", http.StatusNoContent},
}

// adminRoutes are the two routes of /api/v1/admin/ediscovery.
var adminRoutes = []string{adminExportsPath, adminPrefixesPath}

// TestExportRoles checks docs/api.md's roles on every eDiscovery route: no credentials and a bad
// password 401; plain users, customer administrators and, on the auditor routes, the
// global administrator 403 (changing nothing); an auditor gets each route's answer on a
// completed job, and the admin routes are the global administrator's alone.
func TestExportRoles(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t, database.SQLite)
	_, ids := f.generate("default", 3, exportPool)
	f.start()
	job := f.createExport(auditorUser, exportBody("ROLES", ids))
	f.awaitExport(auditorUser, job.JobID, export.StatusCompleted)
	before := f.countRows(`SELECT COUNT(*) FROM events`)
	// At most MaxLoginFailures-1 bad passwords for one user name: 9 routes.
	refused := map[string]func(*http.Request){"no credentials": nil, "bad password": basic(auditorUser, "wrong"),
		"user": as(plainUser), "customer admin": as(customerAdmin), "admin": as(adminUser)}
	for _, route := range auditorRoutes {
		path := strings.ReplaceAll(route.path, "{id}", job.JobID)
		for name, prepare := range refused {
			checkRefused(t, f, route.method, path, route.body, name, prepare)
		}
	}
	for _, path := range adminRoutes {
		for name, prepare := range refused {
			if name != "admin" {
				checkRefused(t, f, http.MethodGet, path, "", name, prepare)
			}
		}
		checkRefused(t, f, http.MethodGet, path, "", "auditor", as(auditorUser))
		resp, raw := f.getAs(adminUser, path)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "GET %s as admin: %s", path, raw)
	}
	assert.Equal(t, before, f.countRows(`SELECT COUNT(*) FROM events`), "refused calls append nothing")
	for _, route := range auditorRoutes {
		path := strings.ReplaceAll(route.path, "{id}", job.JobID)
		resp, raw := f.do(path, as(auditorUser), withBody(route.method, route.body))
		assert.Equal(t, route.auditor, resp.StatusCode, "%s %s as auditor: %.300s", route.method, path, raw)
	}
	_, err := os.Stat(f.jobDir("default", job.JobID))
	assert.True(t, os.IsNotExist(err), "the delete removed the files: %v", err)
	resp, raw := f.getAs(auditorUser, exportsPath+"/"+job.JobID)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "a deleted export is gone: %s", raw)
}

func checkRefused(t *testing.T, f *exportFixture, method, path, body, name string, prepare func(*http.Request)) {
	t.Helper()
	resp, raw := f.do(path, prepare, withBody(method, body))
	want := http.StatusForbidden
	if prepare == nil || name == "bad password" {
		want = http.StatusUnauthorized
	}
	require.Equal(t, want, resp.StatusCode, "%s %s as %s: %s", method, path, name, raw)
	checkStatusBody(t, resp, raw)
}

// TestExportsUnavailable: without the exports the auditor routes answer 503 after the
// role check.
func TestExportsUnavailable(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	resp, raw := f.getAs(auditorUser, exportsPath)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", raw)
	assert.Equal(t, "exports_unavailable", decodeError(t, raw).Error.Code)
	resp, _ = f.getAs(adminUser, exportsPath)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// Auditors of the two customers of the export tenancy test.
const (
	exportAuditorA = "aud-a"
	exportAuditorB = "aud-b"
)

// TestExportTenants: with MULTITENANCY=1 an auditor sees and acts on their own tenant's
// exports only (another tenant's job is 404 on every route, and unchanged); Bates numbers
// of one prefix never repeat across tenants; the admin lists see every tenant.
func TestExportTenants(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d, func(o *handlers.Options) { o.Multitenancy = true })
		f.addUser(exportAuditorA, identity.RoleAuditor, "dpo@a.test", "a.test")
		f.addUser(exportAuditorB, identity.RoleAuditor, "dpo@b.test", "b.test")
		_, idsA := f.generate("a.test", 2, exportPool)
		_, idsB := f.generate("b.test", 3, exportPool)
		a := f.createExport(exportAuditorA, exportBody("SHARED", idsA))
		b := f.createExport(exportAuditorB, exportBody("SHARED", idsB[:1]))
		assert.Equal(t, []string{"a.test", "b.test"}, []string{a.TenantID, b.TenantID})
		assert.Equal(t, int64(3), b.BatesStart, "a prefix's numbers are never issued twice, across tenants")
		f.start()
		a = f.awaitExport(exportAuditorA, a.JobID, export.StatusCompleted)
		f.awaitExport(exportAuditorB, b.JobID, export.StatusCompleted)
		before := f.countRows(`SELECT COUNT(*) FROM events`)
		for _, route := range auditorRoutes {
			if !strings.Contains(route.path, "{id}") {
				continue
			}
			path := strings.ReplaceAll(route.path, "{id}", a.JobID)
			resp, raw := f.do(path, as(exportAuditorB), withBody(route.method, route.body))
			require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %s as the other tenant: %s", route.method, path, raw)
			assert.Equal(t, "not_found", decodeError(t, raw).Error.Code)
		}
		assert.Equal(t, before, f.countRows(`SELECT COUNT(*) FROM events`), "the other tenant changed nothing")
		assert.Equal(t, a, f.getExport(exportAuditorA, a.JobID))
		assert.Equal(t, []string{a.JobID}, jobIDs(f.listExports(exportAuditorA, exportsPath)))
		assert.Equal(t, []string{b.JobID}, jobIDs(f.listExports(exportAuditorB, exportsPath)))
		assert.Equal(t, []string{b.JobID, a.JobID}, jobIDs(f.listExports(adminUser, adminExportsPath)), "every tenant, newest first")
		assert.Equal(t, []string{a.JobID}, jobIDs(f.listExports(adminUser, adminExportsPath+"?tenant=a.test")))
		resp, raw := f.getAs(exportAuditorA, exportsPath+"?tenant=b.test")
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "the auditor's routes take no tenant parameter: %s", raw)
		assert.NotContains(t, string(raw), b.JobID, "the tenant parameter does not reach another tenant")
		for _, user := range []string{exportAuditorA, exportAuditorB} {
			prefixes := f.prefixes(user, prefixesPath)
			require.Len(t, prefixes, 1, user)
			assert.Equal(t, prefixJSON{Prefix: "SHARED", LastNumber: 3, UpdatedAt: prefixes[0].UpdatedAt}, prefixes[0], user)
		}
		resp, raw = f.do(exportsPath+"/"+a.JobID+"/download", as(exportAuditorA))
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%.200s", raw)
	})
}
