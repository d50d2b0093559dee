package handlers_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

func TestManagementGroups(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newManagementFixture(t, d)
		f.mustWriteAt(acmeAdmin, "add_group", `[{"groupname":"sales","email":"B@acme.test\na@acme.test\na@acme.test","assigned_email":"boss@acme.test"}]`, acmeHost, 1)
		groups := f.readArray(acmeAdmin, "get_groups", acmeHost)
		require.Len(t, groups, 1)
		assert.Equal(t, "sales", groups[0]["groupname"])
		id := groups[0]["id"].(string)

		resp, raw := f.curl(acmeAdmin, "get_group", `[{"id":"`+id+`"}]`, acmeHost)
		require.Equal(t, http.StatusOK, resp.StatusCode, "body %s", raw)
		assert.JSONEq(t, `[{"id":"`+id+`","groupname":"sales","email":"a@acme.test\nb@acme.test","assigned_email":"boss@acme.test"}]`, string(raw),
			"addresses lower-cased, de-duplicated and sorted: a set")

		e := f.wantError(acmeAdmin, "add_group", `[{"groupname":"","email":"not an address","assigned_email":"x@"}]`, acmeHost, 400, "validation_failed")
		assert.ElementsMatch(t, []string{"0.groupname", "0.email", "0.assigned_email"}, invalidFields(e))
		f.wantError(acmeAdmin, "add_group", `[{"groupname":"sales","email":""}]`, acmeHost, 409, "conflict")

		f.mustWriteAt(acmeAdmin, "update_group", `[{"id":`+id+`,"groupname":"sales-eu","email":"c@acme.test","assigned_email":""}]`, acmeHost, 1)
		assert.Equal(t, "sales-eu", f.readArray(adminUser, "get_groups", acmeHost)[0]["groupname"], "the global admin reaches acme at its host")
		assert.Empty(t, f.readArray(adminUser, "get_groups", ""), "and the tenant default elsewhere")

		// beta's administrator at acme's host, or at beta's host for acme's group: not found.
		resp, _ = f.read(betaAdmin, "get_groups", acmeHost)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		f.wantError(betaAdmin, "update_group", `[{"id":`+id+`,"groupname":"x"}]`, betaHost, 404, "not_found")
		f.wantError(betaAdmin, "delete_group", `[{"id":`+id+`}]`, betaHost, 404, "not_found")
		f.wantError(betaAdmin, "get_group", `[{"id":`+id+`}]`, betaHost, 404, "not_found")
		assert.Empty(t, f.readArray(betaAdmin, "get_groups", betaHost))

		f.mustWriteAt(acmeAdmin, "delete_group", `[{"id":"`+id+`"}]`, acmeHost, 1)
		assert.Empty(t, f.readArray(acmeAdmin, "get_groups", ""), "without a customer host, a customer admin works in their own")
		f.wantError(acmeAdmin, "delete_group", `[{"id":"`+id+`"}]`, acmeHost, 404, "not_found")
		f.denied(t, http.MethodGet, "get_groups", "")
		f.denied(t, http.MethodPost, "get_group", `[{"id":1}]`)
		f.denied(t, http.MethodPost, "add_group", `[{"groupname":"x"}]`)
		f.denied(t, http.MethodPost, "update_group", `[{"id":1,"groupname":"x"}]`)
		f.denied(t, http.MethodPost, "delete_group", `[{"id":1}]`)
		assert.Equal(t, 3, f.countEvents("management.group_added")+f.countEvents("management.group_updated")+f.countEvents("management.group_deleted"))
	})
}

func TestManagementHeaderChecks(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newManagementFixture(t, d)
		application := f.application()
		before := application.Management.HeaderChecksVersion()
		f.mustWriteAt(acmeAdmin, "add_header_check", `[{"pattern":"^Subject: .*\\[SPAM\\]","tag":"spam"},{"pattern":"(?i)^x-mailer: bulk","tag":"bulk"}]`, acmeHost, 2)
		assert.Greater(t, application.Management.HeaderChecksVersion(), before, "the receiver learns that the rules changed")
		rules, err := application.Management.HeaderRules(t.Context(), "acme")
		require.NoError(t, err)
		require.Len(t, rules, 2)
		assert.True(t, rules[0].Regexp.MatchString("Subject: hi [SPAM]"))

		checks := f.readArray(acmeAdmin, "get_header_checks", acmeHost)
		require.Len(t, checks, 2)
		assert.Equal(t, "spam", checks[0]["tag"])
		assert.Equal(t, `^Subject: .*\[SPAM\]`, checks[0]["pattern"])

		e := f.wantError(acmeAdmin, "add_header_check", `[{"pattern":"ok","tag":"t"},{"pattern":"(?<=lookbehind)","tag":""}]`, acmeHost, 400, "validation_failed")
		assert.ElementsMatch(t, []string{"1.pattern", "1.tag"}, invalidFields(e))
		assert.Len(t, f.readArray(acmeAdmin, "get_header_checks", acmeHost), 2, "nothing of a refused array is applied")

		id := checks[0]["id"].(string)
		resp, _ := f.read(betaAdmin, "get_header_checks", acmeHost)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		f.wantError(betaAdmin, "delete_header_check", fmt.Sprintf(`[{"id":%s}]`, id), betaHost, 404, "not_found")
		assert.Empty(t, f.readArray(betaAdmin, "get_header_checks", betaHost))
		f.mustWriteAt(adminUser, "delete_header_check", fmt.Sprintf(`[{"id":%s}]`, id), acmeHost, 1)
		rules, err = application.Management.HeaderRules(t.Context(), "acme")
		require.NoError(t, err)
		assert.Len(t, rules, 1)
		f.denied(t, http.MethodGet, "get_header_checks", "")
		f.denied(t, http.MethodPost, "add_header_check", `[{"pattern":"x","tag":"y"}]`)
		f.denied(t, http.MethodPost, "delete_header_check", `[{"id":1}]`)
	})
}

// application returns the attached application.
func (f *fixture) application() *app.Application {
	f.t.Helper()
	a := f.appl
	require.NotNil(f.t, a)
	return a
}
