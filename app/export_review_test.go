package app_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/identity"
)

// TestExportNextBates: the continuation is the number Create gives next, known to a tenant
// only for the prefixes its own exports used; an invalid prefix is a validation error.
func TestExportNextBates(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d, app.ExportsConfig{})
		f.createExport("acme", request("CASE", ids(5)))
		f.createExport("globex", request("CASE", ids(3)))

		got, err := f.x.NextBates(f.ctx, "acme", "CASE")
		require.NoError(t, err)
		assert.Equal(t, app.BatesContinuation{Prefix: "CASE", Used: true, LastNumber: 8, Next: 9}, *got)
		next := f.createExport("acme", request("CASE", ids(1)))
		assert.Equal(t, got.Next, next.BatesStart, "Create continues where NextBates said")

		hidden, err := f.x.NextBates(f.ctx, "initech", "CASE")
		require.NoError(t, err)
		assert.Equal(t, app.BatesContinuation{Prefix: "CASE"}, *hidden, "another tenant's numbers are not shown")
		fresh, err := f.x.NextBates(f.ctx, "acme", "NEW")
		require.NoError(t, err)
		assert.False(t, fresh.Used)
		all, err := f.x.NextBates(f.ctx, app.AllTenants, "CASE")
		require.NoError(t, err)
		assert.Equal(t, int64(10), all.Next)

		_, err = f.x.NextBates(f.ctx, "acme", "-bad")
		var ve *domain.ValidationError
		require.ErrorAs(t, err, &ve)
		assert.Contains(t, ve.Fields, "bates_prefix")
	})
}

// TestExportDownloadLogAndProblems: the download log lists each download of a job with
// who and when; the problems list the emails not produced; another tenant's job is not
// found.
func TestExportDownloadLogAndProblems(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t, database.SQLite, app.ExportsConfig{})
	stop := f.start()
	defer stop()
	real := f.archiveMail("acme", generated(1))
	missing := real[0] + 1000
	v := f.createExport("acme", request("LOG", []int64{real[0], missing}))
	f.awaitExport("acme", v.JobID, "completed")
	empty, err := f.x.DownloadLog(f.ctx, "acme", v.JobID)
	require.NoError(t, err)
	assert.Empty(t, empty)
	f.download("acme", v.JobID)

	log, err := f.x.DownloadLog(f.ctx, "acme", v.JobID)
	require.NoError(t, err)
	require.Len(t, log, 1)
	assert.Equal(t, v.JobID, log[0].JobID)
	assert.NotEmpty(t, log[0].DownloadedBy)
	assert.False(t, log[0].DownloadedAt.IsZero())
	_, err = f.x.DownloadLog(f.ctx, "globex", v.JobID)
	assert.ErrorIs(t, err, app.ErrNotFound, "another tenant's job")
	problems, err := f.x.ItemProblems(f.ctx, "acme", v.JobID)
	require.NoError(t, err)
	require.Len(t, problems, 1, "the email that does not exist is not produced")
	assert.Equal(t, missing, problems[0].EmailID)
	assert.NotEqual(t, "success", problems[0].Status)
	_, err = f.x.ItemProblems(f.ctx, "globex", v.JobID)
	assert.ErrorIs(t, err, app.ErrNotFound)
}

// TestScopeExportTenant: only auditors export, in their own tenant.
func TestScopeExportTenant(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		role identity.Role
		ok   bool
	}{{identity.RoleAuditor, true}, {identity.RoleAdmin, false}, {identity.RoleUser, false}} {
		s := app.Scope{Tenant: "acme"}
		s.Role = tc.role
		got, err := s.ExportTenant()
		if tc.ok {
			assert.NoError(t, err)
			assert.Equal(t, "acme", got)
		} else {
			assert.ErrorIs(t, err, app.ErrForbidden, "role %v", tc.role)
		}
	}
}
