package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/identity"
)

// TestSessionFollowsTheUsersTable: like HTTP Basic, a session sees a change of role at
// once, and ends when its user is disabled or deleted or their password changes.
func TestSessionFollowsTheUsersTable(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()

		b := f.login(auditorUser)
		resp, _ := b.get("/compliance/gdpr")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, f.users.SetRole(ctx, auditorUser, identity.RoleUser))
		resp, _ = b.get("/compliance/gdpr")
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a role taken away applies at once")

		b = f.login(approverUser)
		require.NoError(t, f.users.SetDisabled(ctx, approverUser, true))
		resp, _ = b.get("/archive")
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "a disabled user's session ends")
		require.NoError(t, f.users.SetDisabled(ctx, approverUser, false))
		resp, _ = b.get("/archive")
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "and stays ended when the user is enabled again")

		b = f.login(plainUser)
		hash, err := bcrypt.GenerateFromPassword([]byte("a new password"), bcrypt.MinCost)
		require.NoError(t, err)
		_, err = f.env.DB.ExecContext(ctx, f.env.DB.Rebind(`UPDATE users SET password = ? WHERE username = ?`), string(hash), plainUser)
		require.NoError(t, err)
		resp, _ = b.get("/archive")
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "a changed password ends the session")
		assert.True(t, strings.HasPrefix(resp.Header.Get("Location"), "/login"))

		b = f.login(noMailUser)
		_, err = f.env.DB.ExecContext(ctx, f.env.DB.Rebind(`DELETE FROM users WHERE username = ?`), noMailUser)
		require.NoError(t, err)
		resp, _ = b.get("/archive")
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "a deleted user's session ends")
	})
}
