package smtpd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// receiver is a started Server over a fresh SQLite archive.
type receiver struct {
	t    *testing.T
	srv  *Server
	arc  *archive.Archive
	db   *database.DB
	reg  *prometheus.Registry
	port int
	dir  string
}

// startReceiver starts a receiver on a free port with env (SMTP_* variables) over a
// fresh archive; it is shut down after the test.
func startReceiver(t *testing.T, env map[string]string) *receiver {
	t.Helper()
	return startReceiverWith(t, env, archive.Options{})
}

// startReceiverWith is startReceiver over an archive opened with opts.
func startReceiverWith(t *testing.T, env map[string]string, opts archive.Options) *receiver {
	t.Helper()
	return startReceiverAdjusted(t, env, opts, nil)
}

// startReceiverAdjusted is startReceiverWith with the configuration changed by adjust
// (given the receiver's database) before the receiver starts.
func startReceiverAdjusted(t *testing.T, env map[string]string, opts archive.Options, adjust func(*Config, *database.DB)) *receiver {
	t.Helper()
	return startReceiverOn(t, database.SQLite, env, opts, adjust)
}

// startReceiverOn is startReceiverAdjusted on a database of dialect d.
func startReceiverOn(t *testing.T, d database.Dialect, env map[string]string, opts archive.Options, adjust func(*Config, *database.DB)) *receiver {
	t.Helper()
	dir := t.TempDir()
	getenv := func(k string) string {
		if k == "SMTP_ADDR" && env[k] == "" {
			return "127.0.0.1:0"
		}
		return env[k]
	}
	cfg, err := ConfigFromEnv(getenv, dir)
	require.NoError(t, err)
	db := dbtest.Open(t, d)
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	require.NoError(t, err)
	blobs, err := archive.NewLocalStore(filepath.Join(dir, "store"))
	require.NoError(t, err)
	arc, err := archive.New(db, blobs, keys, opts)
	require.NoError(t, err)
	if adjust != nil {
		adjust(&cfg, db)
	}
	r := &receiver{t: t, arc: arc, db: db, reg: prometheus.NewRegistry(), dir: dir}
	r.srv, err = New(cfg, arc, Options{Registerer: r.reg})
	require.NoError(t, err)
	require.NoError(t, r.srv.Start())
	r.port = r.srv.Addr().(*net.TCPAddr).Port
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, r.srv.Shutdown(ctx))
	})
	return r
}

func (r *receiver) addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// count is the number of messages tenant has.
func (r *receiver) count(tenant string) int {
	r.t.Helper()
	var n int
	require.NoError(r.t, r.db.QueryRowContext(context.Background(), r.db.Rebind(`SELECT COUNT(*) FROM metadata WHERE tenant_id = ?`), tenant).Scan(&n))
	return n
}

// ids are the ids of tenant's messages, oldest first.
func (r *receiver) ids(tenant string) []int64 {
	r.t.Helper()
	return dbtest.Column[int64](r.t, r.db, `SELECT id FROM metadata WHERE tenant_id = ? ORDER BY id`, tenant)
}

// envelope lists the envelope recipients recorded for message id.
func (r *receiver) envelope(id int64) []string {
	r.t.Helper()
	return dbtest.Column[string](r.t, r.db, `SELECT "to" FROM rcpt WHERE id = ? AND kind = ? ORDER BY "to"`, id, archive.KindEnvelope)
}

// raw reads message id of tenant back through the archive.
func (r *receiver) raw(tenant string, id int64) []byte {
	r.t.Helper()
	b, err := r.arc.Raw(context.Background(), tenant, id)
	require.NoError(r.t, err)
	return b
}

// metric is the value of a counter (or a histogram's count) of the receiver's registry;
// label selects a reason of mailledger_smtp_refused_total.
func (r *receiver) metric(name, label string) float64 {
	r.t.Helper()
	families, err := r.reg.Gather()
	require.NoError(r.t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label != "" && !hasLabel(m, label) {
				continue
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

func hasLabel(m *dto.Metric, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetValue() == value {
			return true
		}
	}
	return false
}

// message is a small message with CRLF line ends whose Message-ID is id; extra lines go
// into the header.
func message(id, body string, extra ...string) []byte {
	head := "From: Alice <alice@sender.test>\r\nTo: bob@example.test\r\nSubject: test " + id +
		"\r\nDate: Tue, 24 Nov 2026 10:00:00 +0000\r\nMessage-ID: <" + id + "@sender.test>\r\n"
	for _, e := range extra {
		head += e + "\r\n"
	}
	return []byte(head + "\r\n" + body + "\r\n")
}

// pyResult is what testdata/send.py prints.
type pyResult struct {
	EHLO     []string `json:"ehlo"`
	EHLOTLS  []string `json:"ehlo_tls"`
	StartTLS int      `json:"starttls"`
	Mail     int      `json:"mail"`
	Rcpt     []int    `json:"rcpt"`
	Data     int      `json:"data"`
	DataText string   `json:"data_text"`
}

// smtplib sends msg with Python's smtplib (testdata/send.py); opts are more of its
// arguments (starttls, mail_options).
func (r *receiver) smtplib(msg []byte, to []string, opts map[string]any) pyResult {
	r.t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		requireTool(r.t, "python3")
	}
	file := filepath.Join(r.t.TempDir(), "msg.eml")
	require.NoError(r.t, os.WriteFile(file, msg, 0o600))
	args := map[string]any{"port": r.port, "from": "alice@sender.test", "to": to, "file": file}
	for k, v := range opts {
		args[k] = v
	}
	js, err := json.Marshal(args)
	require.NoError(r.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "python3", "testdata/send.py", string(js)).Output()
	require.NoError(r.t, err, "send.py: %s", exitText(err))
	var res pyResult
	require.NoError(r.t, json.Unmarshal(out, &res), "send.py printed %q", out)
	return res
}

func exitText(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return fmt.Sprint(err)
}

// requireTool skips the test loudly when tool is not installed, or fails it under CI.
func requireTool(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (CI=true: .ci/run installs it)", tool)
	}
	t.Skipf("SKIP: %s not installed", tool)
}
