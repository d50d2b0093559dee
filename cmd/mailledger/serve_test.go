package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
)

// ledgerMetricNames are the append metrics that /metrics must show from the start.
var ledgerMetricNames = []string{
	"mailledger_ledger_appends_total",
	"mailledger_ledger_events_total",
	"mailledger_ledger_append_duration_seconds",
	"mailledger_ledger_head_position",
}

func TestServeLifecycle(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		env := baseEnv(t)
		if d != database.SQLite { // SQLite runs on the default DATABASE_URL under the data dir
			env["DATABASE_URL"] = dbtest.URL(t, d)
		}
		env["MAILLEDGER_CHECKPOINT_EVERY"] = "2"
		env["METRICS_TOKEN"] = metricsToken
		metricsAddr := freeAddr(t)
		env["METRICS_ADDR"] = metricsAddr
		migrated := runBinary(t, env, "migrate")
		require.Equal(t, 0, migrated.code, "migrate: %s", migrated.stderr)
		assert.Contains(t, migrated.stdout, "migrated "+string(d)+" database to version")

		s := startServe(t, env)
		s.waitFor("/readyz", http.StatusOK, 60*time.Second)
		status, _ := s.get("/healthz", false)
		assert.Equal(t, http.StatusOK, status)
		status, page := s.get("/", false) // the console, on the API's address: to its login form
		assert.Equal(t, http.StatusOK, status)
		assert.Contains(t, page, `<form class="stack" method="post" action="/login">`)
		checkLedgerEndpoints(t, s)
		checkBackgroundCheckpoints(t, s, env)
		checkMetrics(t, s.base, metricsAddr)

		started := time.Now()
		s.stop(5 * time.Second)
		t.Logf("%s: serve exited %s after SIGTERM", d, time.Since(started).Round(time.Millisecond))
		logs := strings.Join(s.logLines(), "\n")
		assert.NotContains(t, logs, testPassword, "the bootstrap password is never logged")
		assert.Contains(t, logs, `"msg":"stopped"`)
	})
}

const metricsToken = "metrics-token-for-tests"

// checkMetrics requires /metrics behind METRICS_TOKEN on the API's address and on
// METRICS_ADDR, with the ledger metrics.
func checkMetrics(t *testing.T, apiBase, metricsAddr string) {
	t.Helper()
	for _, base := range []string{apiBase, "http://" + metricsAddr} {
		status, _ := getWithToken(t, base+"/metrics", "")
		assert.Equal(t, http.StatusUnauthorized, status, "%s/metrics without the token", base)
		status, metrics := getWithToken(t, base+"/metrics", metricsToken)
		require.Equal(t, http.StatusOK, status, "%s/metrics", base)
		for _, name := range ledgerMetricNames {
			assert.Contains(t, metrics, "\n"+name, "%s/metrics lacks %s", base, name)
		}
	}
	status, _ := getWithToken(t, "http://"+metricsAddr+"/api/v1/ledger/public-key", metricsToken)
	assert.Equal(t, http.StatusNotFound, status, "METRICS_ADDR serves /metrics only")
}

// getWithToken fetches target with the bearer token (none when empty).
func getWithToken(t *testing.T, target, token string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// checkLedgerEndpoints fetches the public key and a checkpoint with the bootstrap admin
// and verifies the checkpoint's signature with the key.
func checkLedgerEndpoints(t *testing.T, s *server) {
	t.Helper()
	status, body := s.get("/api/v1/ledger/checkpoint", false)
	assert.Equal(t, http.StatusUnauthorized, status, "no credentials: %s", body)
	status, vkey := s.get("/api/v1/ledger/public-key", true)
	require.Equal(t, http.StatusOK, status, vkey)
	status, note := s.get("/api/v1/ledger/checkpoint", true)
	require.Equal(t, http.StatusOK, status, note)
	cp, err := eventstore.OpenCheckpoint([]byte(note), strings.TrimSpace(vkey))
	require.NoError(t, err, "checkpoint %q with key %q", note, vkey)
	assert.Equal(t, int64(0), cp.Size)
	assert.Equal(t, "mailledger", cp.Origin)
}

// checkBackgroundCheckpoints appends events from another process's point of view and
// requires the checkpointer to sign them, and the proof endpoint to use that checkpoint.
func checkBackgroundCheckpoints(t *testing.T, s *server, env map[string]string) {
	t.Helper()
	store, _ := openLedger(t, env)
	appendEvents(t, store, 3)
	require.Eventually(t, func() bool {
		cp, err := store.LatestCheckpoint(context.Background())
		return err == nil && cp.Size == 3
	}, 15*time.Second, 50*time.Millisecond, "serve signs a checkpoint after MAILLEDGER_CHECKPOINT_EVERY events")
	status, body := s.get("/api/v1/ledger/proof?position=2", true)
	require.Equal(t, http.StatusOK, status, body)
	var p struct {
		TreeSize   int64   `json:"tree_size"`
		Checkpoint *string `json:"checkpoint"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &p))
	assert.Equal(t, int64(3), p.TreeSize)
	assert.NotNil(t, p.Checkpoint)
}

func TestServeWaitsForTheDatabase(t *testing.T) {
	target := dbtest.URL(t, database.Postgres) // skips loudly without TEST_POSTGRES_URL
	u, err := url.Parse(target)
	require.NoError(t, err)
	proxy := newGate(t, u.Host)
	u.Host = proxy.addr
	env := baseEnv(t)
	env["DATABASE_URL"] = u.String()

	s := startServe(t, env)
	s.waitFor("/healthz", http.StatusOK, 30*time.Second)
	require.Eventually(t, func() bool {
		return strings.Count(s.stderr.String(), "database not available; retrying") >= 2
	}, 30*time.Second, 50*time.Millisecond, "each failed attempt is logged")
	status, body := s.get("/readyz", false)
	require.Equal(t, http.StatusServiceUnavailable, status, body)
	assert.Contains(t, body, `"code":"database_unavailable"`)

	proxy.open.Store(true)
	s.waitFor("/readyz", http.StatusOK, 30*time.Second)
	status, _ = s.get("/api/v1/ledger/checkpoint", true)
	assert.Equal(t, http.StatusOK, status)
	s.stop(5 * time.Second)
	assert.Contains(t, s.stderr.String(), `"retry_in":"2s"`, "the wait between attempts doubles")
}

// gate is a TCP proxy to a database server that drops every connection until opened.
type gate struct {
	addr string
	open atomic.Bool
}

func newGate(t *testing.T, target string) *gate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	g := &gate{addr: ln.Addr().String()}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go g.serve(conn, target)
		}
	}()
	return g
}

func (g *gate) serve(conn net.Conn, target string) {
	defer conn.Close()
	if !g.open.Load() {
		return
	}
	upstream, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer upstream.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(upstream, conn); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, upstream); done <- struct{}{} }()
	<-done
}
