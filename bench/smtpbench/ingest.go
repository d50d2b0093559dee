package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/smtpd"
)

// tenant is the tenant both paths archive into (smtpd's default tenant).
const tenant = "default"

// result is one dialect's import and SMTP ingest of the same messages.
type result struct {
	dialect    database.Dialect
	version    string
	durability string
	messages   int
	bytes      int64
	importTime time.Duration
	importCPU  benchenv.CPUTime
	smtpTime   time.Duration
	smtpCPU    benchenv.CPUTime // clients and receiver: both run in this process
	commits    commitStats
}

func (r result) importRate() float64 { return benchenv.Rate(float64(r.messages), r.importTime) }
func (r result) smtpRate() float64   { return benchenv.Rate(float64(r.messages), r.smtpTime) }

// runDialect imports the messages into one fresh database, then sends them over SMTP
// into a second one.
func runDialect(ctx context.Context, cfg *config, d database.Dialect, w *workload) (result, error) {
	res := result{dialect: d, messages: len(w.msgs), bytes: w.bytes}
	if err := runImport(ctx, cfg, d, w, &res); err != nil {
		return res, err
	}
	if err := runSMTP(ctx, cfg, d, w, &res); err != nil {
		return res, fmt.Errorf("smtp: %w", err)
	}
	return res, nil
}

func runImport(ctx context.Context, cfg *config, d database.Dialect, w *workload, res *result) error {
	db, err := benchenv.OpenFresh(ctx, d, cfg.urls[d], w.work)
	if err != nil {
		return err
	}
	defer db.Close()
	res.version, res.durability = db.Version, benchenv.Durability(ctx, db.DB)
	arc, err := newArchive(db.DB, filepath.Join(w.work, "import-"+string(d)))
	if err != nil {
		return err
	}
	im := &archive.Importer{Archive: arc}
	start, cpu := time.Now(), benchenv.ProcessCPU()
	rep, err := im.Import(ctx, tenant, []string{w.src})
	res.importTime, res.importCPU = time.Since(start), benchenv.ProcessCPU().Sub(cpu)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if rep.Imported != len(w.msgs) || rep.Failed+rep.Duplicates > 0 {
		return fmt.Errorf("import: %s; want imported %d, no duplicate, no failure", rep.Summary(), len(w.msgs))
	}
	return checkArchivedOnce(ctx, db.DB, len(w.msgs))
}

func runSMTP(ctx context.Context, cfg *config, d database.Dialect, w *workload, res *result) error {
	db, err := benchenv.OpenFresh(ctx, d, cfg.urls[d], w.work)
	if err != nil {
		return err
	}
	defer db.Close()
	dataDir := filepath.Join(w.work, "smtp-"+string(d))
	arc, err := newArchive(db.DB, dataDir)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	srv, err := startReceiver(arc, reg, dataDir)
	if err != nil {
		return err
	}
	start, cpu := time.Now(), benchenv.ProcessCPU()
	err = sendAll(ctx, srv.Addr().String(), w.msgs, cfg.clients, cfg.client)
	res.smtpTime, res.smtpCPU = time.Since(start), benchenv.ProcessCPU().Sub(cpu)
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if stopErr := srv.Shutdown(stopCtx); err == nil {
		err = stopErr
	}
	if err != nil {
		return err
	}
	if res.commits, err = gatherCommits(reg); err != nil {
		return err
	}
	return checkArchivedOnce(ctx, db.DB, len(w.msgs))
}

// newArchive opens the archive as the service does: a local store and key ring under dir.
func newArchive(db *database.DB, dir string) (*archive.Archive, error) {
	blobs, err := archive.NewLocalStore(filepath.Join(dir, "store"))
	if err != nil {
		return nil, err
	}
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	if err != nil {
		return nil, err
	}
	return archive.New(db, blobs, keys, archive.Options{})
}

// startReceiver starts smtpd with its defaults on a free loopback port, STARTTLS off.
func startReceiver(arc *archive.Archive, reg prometheus.Registerer, dataDir string) (*smtpd.Server, error) {
	env := map[string]string{"SMTP_ADDR": "127.0.0.1:0", "SMTP_STARTTLS": "0", "SMTP_HOSTNAME": "smtpbench.test",
		// to compare: SMTP_COMMIT_LINGER=0 turns the linger off, SMTP_COMMITTERS=1 runs one commit at a time
		"SMTP_COMMIT_LINGER": os.Getenv("SMTP_COMMIT_LINGER"), "SMTP_COMMITTERS": os.Getenv("SMTP_COMMITTERS")}
	cfg, err := smtpd.ConfigFromEnv(func(k string) string { return env[k] }, dataDir)
	if err != nil {
		return nil, err
	}
	srv, err := smtpd.New(cfg, arc, smtpd.Options{Logger: slog.New(slog.DiscardHandler), Registerer: reg})
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	if _, ok := srv.Addr().(*net.TCPAddr); !ok {
		return nil, fmt.Errorf("receiver listens on %v, not TCP", srv.Addr())
	}
	return srv, nil
}

// checkArchivedOnce counts the tenant's rows: every message once (the digest is unique
// per tenant, so n rows of n distinct messages is each once).
func checkArchivedOnce(ctx context.Context, db *database.DB, n int) error {
	var rows, distinct int
	q := db.Rebind(`SELECT COUNT(*), COUNT(DISTINCT digest) FROM metadata WHERE tenant_id = ?`)
	if err := db.QueryRowContext(ctx, q, tenant).Scan(&rows, &distinct); err != nil {
		return fmt.Errorf("count: %w", err)
	}
	if rows != n || distinct != n {
		return fmt.Errorf("archive holds %d rows (%d distinct); want %d", rows, distinct, n)
	}
	return nil
}
