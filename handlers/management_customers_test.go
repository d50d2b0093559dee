package handlers_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

func TestManagementDomains(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newManagementFixture(t, d)
		f.mustWrite(adminUser, "add_domain", `[{"domain":"Mail.Acme.TEST","mapped":"acme.test","ldap_id":""},{"domain":"spare.test","mapped":"","ldap_id":"3"}]`, 2)
		got := f.readArray(adminUser, "get_domains", "")
		assert.Equal(t, []map[string]any{
			{"domain": "mail.acme.test", "mapped": "acme.test", "ldap": nil},
			{"domain": "spare.test", "mapped": "", "ldap": "3"},
		}, got, "lower-cased, in order of name")

		e := f.wantError(adminUser, "add_domain", `[{"domain":"ok.test","mapped":""},{"domain":"bad domain","mapped":"-x-"}]`, "", 400, "validation_failed")
		assert.ElementsMatch(t, []string{"1.domain", "1.mapped"}, invalidFields(e))
		f.wantError(adminUser, "add_domain", `[{"domain":"new.test"},{"domain":"spare.test"}]`, "", 409, "conflict")
		f.wantError(adminUser, "add_domain", `[{"domain":"twice.test"},{"domain":"twice.test"}]`, "", 409, "conflict")
		assert.Len(t, f.readArray(adminUser, "get_domains", ""), 2, "nothing of a refused array is applied")

		f.mustWrite(adminUser, "add_domain", `[{"domain":"acme.test"}]`, 1)
		f.wantError(adminUser, "delete_domain", `[{"domain":"acme.test"}]`, "", 409, "conflict") // users and a customer
		f.addUser("someone", 0, "", "spare.test")
		f.wantError(adminUser, "delete_domain", `[{"domain":"spare.test"}]`, "", 409, "conflict") // a user
		f.mustWrite(adminUser, "delete_domain", `[{"domain":"mail.acme.test"}]`, 1)
		f.wantError(adminUser, "delete_domain", `[{"domain":"gone.test"}]`, "", 404, "not_found")

		f.wantError(acmeAdmin, "add_domain", `[{"domain":"x.test"}]`, "", 403, "forbidden")
		f.wantError(acmeAdmin, "delete_domain", `[{"domain":"spare.test"}]`, "", 403, "forbidden")
		assert.Equal(t, []map[string]any{{"domain": "acme.test", "mapped": "", "ldap": nil}},
			f.readArray(acmeAdmin, "get_domains", ""), "a customer admin sees their own domains")
		f.denied(t, http.MethodGet, "get_domains", "")
		f.denied(t, http.MethodPost, "add_domain", `[{"domain":"x.test"}]`)
		f.denied(t, http.MethodPost, "delete_domain", `[{"domain":"spare.test"}]`)
	})
}

func TestManagementCustomerShapes(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newManagementFixture(t, d)
		resp, raw := f.read(adminUser, "get_customers", "")
		require.Equal(t, http.StatusOK, resp.StatusCode, "body %s", raw)
		var ids []string
		decode(t, raw, &ids)
		assert.Equal(t, []string{"acme", "beta"}, ids)

		list := f.readArray(adminUser, "get_customer_list", "")
		require.Len(t, list, 2)
		acme := list[0]
		assert.Equal(t, "acme", acme["customer_id"])
		assert.Equal(t, "100", acme["quota"], "numbers are strings")
		assert.Equal(t, "365", acme["retention_days"])
		assert.Equal(t, "0", acme["enable_purge"])
		assert.Equal(t, "1", acme["enabled"])
		assert.Equal(t, "OK", acme["status"])
		assert.Nil(t, acme["text_colour"], "unset is null")
		assert.Contains(t, acme, "branding_logo")
		assert.NotContains(t, acme, "admin_password")
		assert.Regexp(t, `^[0-9]+$`, acme["created"])
		assert.Regexp(t, `^[0-9]+$`, acme["id"])
		assert.Equal(t, "0", acme["used"])

		resp, raw = f.read(adminUser, "get_customer_list/id/"+acme["id"].(string), "")
		require.Equal(t, http.StatusOK, resp.StatusCode, "body %s", raw)
		var one map[string]any
		decode(t, raw, &one)
		delete(acme, "status")
		assert.Equal(t, acme, one, "the one customer is the list's element without status")
		checkStatus(t, f, adminUser, "/api/v1/get_customer_list/id/999999", http.StatusNotFound)
		checkStatus(t, f, adminUser, "/api/v1/get_customer_list/id/abc", http.StatusNotFound)

		f.mustWrite(adminUser, "update_customer", `[{"customer_id":"acme","quota":"250","retention_days":"30","enable_purge":"1","text_colour":"#112233","background_colour":"#FFFFFF","branding_logo":"https://acme.test/logo.png"}]`, 1)
		acme = f.readArray(adminUser, "get_customer_list", "")[0]
		assert.Equal(t, "250", acme["quota"], "numeric strings are accepted")
		assert.Equal(t, "1", acme["enable_purge"])
		assert.Equal(t, "#112233", acme["text_colour"])
		assert.Equal(t, "https://archive.acme.test", acme["gui_url"], "absent fields are left as they are")
	})
}

func TestManagementCustomerWrites(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newManagementFixture(t, d)
		users := f.countRows("users")
		e := f.wantError(adminUser, "add_customer", "["+customerBody("gamma", "gamma.test", "g.test")+
			`,{"customer_id":"bad id!","domain":"x","customer_address":"nope","quota":-1,"retention_days":"x","gui_url":"::","admin_password":"plaintext","text_colour":"red","enable_purge":7}]`,
			"", 400, "validation_failed")
		assert.ElementsMatch(t, []string{"1.customer_id", "1.domain", "1.customer_address", "1.quota", "1.retention_days",
			"1.gui_url", "1.admin_password", "1.text_colour", "1.enable_purge"}, invalidFields(e))
		f.wantError(adminUser, "add_customer", "["+customerBody("gamma", "gamma.test", "g.test")+","+
			customerBody("acme", "acme2.test", "a2.test")+"]", "", 409, "conflict")
		f.wantError(adminUser, "add_customer", "["+customerBody("delta", "acme.test", "d.test")+"]", "", 409, "conflict")
		assert.Equal(t, 2, f.countRows("customers"), "nothing of a refused array is applied")
		assert.Equal(t, users, f.countRows("users"), "no administrator created either")
		var stored int
		require.NoError(t, f.db.QueryRow(`SELECT COUNT(*) FROM users WHERE password = 'plaintext'`).Scan(&stored))
		assert.Zero(t, stored, "a password that is not a hash is never stored")

		f.archiveMail("acme", archivetest.Message("x@acme.test", []string{"y@acme.test"}, nil, "kept", "body", day))
		f.mustWrite(adminUser, "delete_customer", `[{"customer_id":"acme"}]`, 1)
		assert.Equal(t, 1, f.countRows("customers"))
		var mail int
		require.NoError(t, f.db.QueryRow(f.db.Rebind(`SELECT COUNT(*) FROM metadata WHERE tenant_id = ?`), "acme").Scan(&mail))
		assert.Equal(t, 1, mail, "delete_customer leaves the customer's mail")
		assert.Equal(t, users, f.countRows("users"), "delete_customer removes only the customer's row")
		f.wantError(adminUser, "delete_customer", `[{"customer_id":"acme"}]`, "", 404, "not_found")
		assert.Equal(t, 1, f.countEvents("management.customer_deleted"))
	})
}

func TestManagementCustomerRoles(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newManagementFixture(t, d)
		ids := f.readArray(acmeAdmin, "get_customer_list", "")
		require.Len(t, ids, 1, "a customer admin lists their own customer only")
		assert.Equal(t, "acme", ids[0]["customer_id"])
		beta := f.readArray(adminUser, "get_customer_list", "")[1]
		checkStatus(t, f, acmeAdmin, "/api/v1/get_customer_list/id/"+beta["id"].(string), http.StatusNotFound)
		resp, raw := f.read(acmeAdmin, "get_customers", "")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.JSONEq(t, `["acme"]`, string(raw))

		f.mustWrite(acmeAdmin, "update_customer", `[{"customer_id":"acme","branding_url":"https://acme.test/b","support_link":"https://acme.test/help"}]`, 1)
		f.wantError(acmeAdmin, "update_customer", `[{"customer_id":"acme","quota":1}]`, "", 403, "forbidden")
		f.wantError(acmeAdmin, "update_customer", `[{"customer_id":"beta","branding_url":"https://x.test"}]`, "", 404, "not_found")
		f.wantError(betaAdmin, "update_customer", `[{"customer_id":"acme","branding_url":"https://x.test"}]`, "", 404, "not_found")
		f.wantError(acmeAdmin, "add_customer", "["+customerBody("zeta", "zeta.test", "z.test")+"]", "", 403, "forbidden")
		f.wantError(acmeAdmin, "delete_customer", `[{"customer_id":"acme"}]`, "", 403, "forbidden")
		f.denied(t, http.MethodGet, "get_customers", "")
		f.denied(t, http.MethodGet, "get_customer_list", "")
		f.denied(t, http.MethodPost, "add_customer", "["+customerBody("zeta", "zeta.test", "z.test")+"]")
		f.denied(t, http.MethodPost, "update_customer", `[{"customer_id":"acme"}]`)
		f.denied(t, http.MethodPost, "delete_customer", `[{"customer_id":"acme"}]`)
		assert.Equal(t, 2, f.countRows("customers"))
	})
}
