package app_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

func TestHeaderTaggerReadsRulesAgain(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, database.SQLite)
	addRule := func(tenant, pattern, tag string) {
		t.Helper()
		_, err := db.Exec(`INSERT INTO header_checks (tenant_id, pattern, tag) VALUES (?, ?, ?)`, tenant, pattern, tag)
		require.NoError(t, err)
	}
	addRule("acme", `(?mi)^x-priority: 1`, "urgent")
	addRule("beta", `(?mi)^x-priority: 1`, "beta-urgent")
	tagger, err := app.NewHeaderTagger(db, app.HeaderTaggerConfig{Refresh: 200 * time.Millisecond})
	require.NoError(t, err)
	header := []byte("From: a@acme.test\r\nX-Priority: 1 (Highest)\r\nX-Spam: no")
	assert.Equal(t, []string{"urgent"}, tagger.Tags("acme", header))
	assert.Empty(t, tagger.Tags("acme", []byte("From: a@acme.test")))
	assert.Empty(t, tagger.Tags("gamma", header), "a tenant without rules")

	addRule("acme", `(?mi)^x-spam: no`, "ham")
	assert.Equal(t, []string{"urgent"}, tagger.Tags("acme", header), "kept until the refresh")
	require.Eventually(t, func() bool { return len(tagger.Tags("acme", header)) == 2 }, 5*time.Second, 20*time.Millisecond,
		"read again after Refresh")

	require.NoError(t, db.Close())
	assert.Equal(t, []string{"urgent", "ham"}, tagger.Tags("acme", header), "a database that fails keeps the last rules")
	tagger.Invalidate()
	assert.Equal(t, []string{"urgent", "ham"}, tagger.Tags("acme", header))
}
