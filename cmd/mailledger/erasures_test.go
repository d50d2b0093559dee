package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErasuresReapplyCommand(t *testing.T) {
	env := baseEnv(t)
	r := runBinary(t, env, "erasures", "reapply")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "reapplied erasures: 0 found something, 0 messages erased again, 0 files back for the next purge\n", r.stdout)
	store, _ := openLedger(t, env)
	var n int
	require.NoError(t, store.DB().QueryRow(`SELECT COUNT(*) FROM events WHERE event_type = 'erasure.reapplied'`).Scan(&n))
	assert.Equal(t, 1, n, "the run is in the ledger, though it found nothing")

	r = runBinary(t, env, "erasures")
	assert.Equal(t, exitUsage, r.code)
	r = runBinary(t, env, "erasures", "reapply", "--help")
	assert.Equal(t, 0, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, "usage: mailledger erasures reapply"), r.stdout)
}
