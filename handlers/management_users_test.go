package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// argon2idHash is an encoded argon2id hash of adminPass (m=64 MiB, t=1, p=1), the form
// PHP's password_hash(PASSWORD_ARGON2ID) writes.
const argon2idHash = "$argon2id$v=19$m=65536,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$4vWGArhLB7NuGeXTfxAK3WUJuzMJAUtVkxqNbSaKYas"

func userBody(name, domain, hash, isadmin string) string {
	return fmt.Sprintf(`{"username":%q,"realname":"R %s","email":"%s@%s","domain":%q,"password":%q,"isadmin":%s,"dn":"","samaccountname":""}`,
		name, name, name, domain, domain, hash, isadmin)
}

// uidOf returns the uid of username.
func (f *fixture) uidOf(username string) int64 {
	f.t.Helper()
	u, err := f.users.ByUsername(context.Background(), username)
	require.NoError(f.t, err)
	return u.UID
}

func TestManagementUsers(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newManagementFixture(t, d)
		f.mustWrite(adminUser, "add_user", "["+userBody("carol", "acme.test", testHash(), `"0"`)+","+
			userBody("dave", "beta.test", argon2idHash, `2`)+"]", 2)
		checkStatus(t, f, "carol", "/api/v1/messages", http.StatusOK) // bcrypt hash: carol logs in
		resp, _ := f.getAs("dave", "/api/v1/admin/legal-holds")
		assert.Equal(t, http.StatusOK, resp.StatusCode, "an argon2id hash logs in too")

		e := f.wantError(adminUser, "add_user", `[{"username":"","email":"bad","domain":"no domain","password":"secret","isadmin":"7"}]`, "", 400, "validation_failed")
		assert.ElementsMatch(t, []string{"0.username", "0.email", "0.domain", "0.password", "0.isadmin"}, invalidFields(e))
		f.wantError(adminUser, "add_user", "["+userBody("erin", "acme.test", testHash(), `"0"`)+","+userBody("carol", "acme.test", testHash(), `"0"`)+"]", "", 409, "conflict")
		_, err := f.users.ByUsername(context.Background(), "erin")
		assert.Error(t, err, "nothing of a refused array is applied")

		carol := f.uidOf("carol")
		f.mustWrite(adminUser, "add_group", `[{"groupname":"sales","email":"a@acme.test","assigned_email":""}]`, 1) // in tenant default
		f.mustWriteAt(acmeAdmin, "add_group", `[{"groupname":"sales","email":"a@acme.test","assigned_email":""}]`, acmeHost, 1)
		f.mustWrite(adminUser, "update_user", fmt.Sprintf(`[{"uid":%d,"username":"carol","realname":"Carol C","password":"","email":"carol@acme.test","domain":"acme.test","isadmin":"0","group":"sales","dn":"","samaccountname":""}]`, carol), 1)
		checkStatus(t, f, "carol", "/api/v1/messages", http.StatusOK) // the empty password kept hers
		f.wantError(adminUser, "update_user", fmt.Sprintf(`[{"uid":%d,"password":"newplain"}]`, carol), "", 400, "validation_failed")
		f.wantError(adminUser, "update_user", fmt.Sprintf(`[{"uid":%d,"group":"nosuch"}]`, carol), "", 400, "validation_failed")
		f.wantError(adminUser, "update_user", `[{"uid":999999,"realname":"x"}]`, "", 404, "not_found")

		f.mustWrite(adminUser, "delete_user", fmt.Sprintf(`[{"uid":"%d","username":"carol"}]`, carol), 1)
		resp, _ = f.getAs("carol", "/api/v1/messages")
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a deleted user cannot log in")
		assert.Equal(t, 4, f.countEvents("management.user_added"), "the two customers' administrators and carol and dave")
		assert.Equal(t, 1, f.countEvents("management.user_deleted"))
		f.ledgerHasNoHash(t)
	})
}

func TestManagementUserRoles(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newManagementFixture(t, d)
		f.mustWrite(acmeAdmin, "add_user", "["+userBody("frank", "acme.test", testHash(), `"0"`)+"]", 1)
		f.wantError(acmeAdmin, "add_user", "["+userBody("gina", "beta.test", testHash(), `"0"`)+"]", "", 404, "not_found")
		f.wantError(acmeAdmin, "add_user", "["+userBody("gina", "local", testHash(), `"1"`)+"]", "", 404, "not_found")
		frank := f.uidOf("frank")
		f.wantError(betaAdmin, "update_user", fmt.Sprintf(`[{"uid":%d,"realname":"x"}]`, frank), "", 404, "not_found")
		f.wantError(betaAdmin, "delete_user", fmt.Sprintf(`[{"uid":%d}]`, frank), "", 404, "not_found")
		f.wantError(acmeAdmin, "update_user", fmt.Sprintf(`[{"uid":%d,"domain":"beta.test"}]`, frank), "", 404, "not_found")
		f.wantError(acmeAdmin, "delete_user", fmt.Sprintf(`[{"uid":%d}]`, f.uidOf(adminUser)), "", 404, "not_found")
		f.mustWrite(acmeAdmin, "update_user", fmt.Sprintf(`[{"uid":%d,"realname":"Frank F"}]`, frank), 1)
		f.mustWrite(acmeAdmin, "delete_user", fmt.Sprintf(`[{"uid":%d}]`, frank), 1)
		f.denied(t, http.MethodPost, "add_user", "["+userBody("hal", "acme.test", testHash(), `"0"`)+"]")
		f.denied(t, http.MethodPost, "update_user", `[{"uid":1}]`)
		f.denied(t, http.MethodPost, "delete_user", `[{"uid":1}]`)
	})
}

// ledgerHasNoHash checks that no management event holds a password hash.
func (f *fixture) ledgerHasNoHash(t *testing.T) {
	t.Helper()
	rows, err := f.db.Query(`SELECT payload FROM events WHERE event_type LIKE 'management.%'`)
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var payload string
		require.NoError(t, rows.Scan(&payload))
		assert.NotContains(t, payload, "$2a$")
		assert.NotContains(t, payload, "$argon2id$")
		assert.NotContains(t, payload, `"password"`)
		n++
	}
	require.NoError(t, rows.Err())
	assert.Positive(t, n)
}
