package handlers_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net/http"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
)

// The eDiscovery paths.
const (
	exportPath        = "/api/v1/ediscovery/export"
	exportsPath       = "/api/v1/ediscovery/exports"
	prefixesPath      = "/api/v1/ediscovery/bates-prefixes"
	adminExportsPath  = "/api/v1/admin/ediscovery/exports"
	adminPrefixesPath = "/api/v1/admin/ediscovery/bates-prefixes"
)

// exportJSON is an export as the API answers it; pointers tell null from set.
type exportJSON struct {
	ID           int64          `json:"id"`
	JobID        string         `json:"job_id"`
	TenantID     string         `json:"tenant_id"`
	Status       string         `json:"status"`
	BatesPrefix  string         `json:"bates_prefix"`
	BatesStart   int64          `json:"bates_start"`
	BatesEnd     *int64         `json:"bates_end"`
	TotalEmails  int            `json:"total_emails"`
	Processed    int            `json:"processed"`
	Failed       int            `json:"failed"`
	Config       map[string]any `json:"config"`
	OutputPath   string         `json:"output_path"`
	OutputSize   *int64         `json:"output_size"`
	ErrorMessage *string        `json:"error_message"`
	CreatedBy    string         `json:"created_by"`
	CreatedAt    string         `json:"created_at"`
	StartedAt    *string        `json:"started_at"`
	CompletedAt  *string        `json:"completed_at"`
	ManifestHash *string        `json:"manifest_hash"`
	Progress     float64        `json:"progress"`
}

// exportKeys are exactly the keys of an export object: the columns of ediscovery_exports
// with config in place of config_json, plus progress (docs/api.md).
var exportKeys = []string{"id", "job_id", "tenant_id", "status", "bates_prefix", "bates_start", "bates_end",
	"total_emails", "processed", "failed", "config", "output_path", "output_size", "error_message",
	"created_by", "created_at", "started_at", "completed_at", "manifest_hash", "progress"}

// configKeys are the keys of the configuration object (docs/api.md).
var configKeys = []string{"bates_prefix", "bates_start_number", "bates_digits", "include_natives", "include_text",
	"include_attachments", "organize_by_custodian", "load_file_format", "date_format", "dat_delimiters",
	"email_ids", "workers"}

// prefixJSON is one Bates prefix sequence.
type prefixJSON struct {
	Prefix     string `json:"prefix"`
	LastNumber int64  `json:"last_number"`
	UpdatedAt  string `json:"updated_at"`
}

// exportFixture is the API with the eDiscovery exports over a fresh database of one
// dialect, productions under dataDir/export.
type exportFixture struct {
	*fixture
	app  *app.Application
	cfg  app.ExportsConfig
	slow *pausingArchive // set by slowExports
}

// pausingArchive is the real archive, read with a pause before each message, so that a
// job runs long enough to be cancelled or deleted while it runs.
type pausingArchive struct {
	*archive.Archive
	pause atomic.Int64 // a time.Duration
}

func (p *pausingArchive) ReadDocument(ctx context.Context, tenant string, id int64) (*archive.Document, error) {
	if err := p.wait(ctx); err != nil {
		return nil, err
	}
	return p.Archive.ReadDocument(ctx, tenant, id)
}

func (p *pausingArchive) ReadNative(ctx context.Context, tenant string, id int64) (*archive.Document, error) {
	if err := p.wait(ctx); err != nil {
		return nil, err
	}
	return p.Archive.ReadNative(ctx, tenant, id)
}

func (p *pausingArchive) wait(ctx context.Context) error {
	select {
	case <-time.After(time.Duration(p.pause.Load())):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newExportFixture serves the API with the users of newFixture (the auditor's tenant is
// "default" unless configure turns multi-tenancy on) and an application built with
// ApplicationConfig.Exports, as serve builds it. Jobs run only after start.
func newExportFixture(t *testing.T, d database.Dialect, configure ...func(*handlers.Options)) *exportFixture {
	t.Helper()
	f := &exportFixture{fixture: newDetachedFixture(t, d, configure...)}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", f.logs)
		}
	})
	f.addUser(adminUser, identity.RoleAdmin, "", identity.LocalDomain)
	f.addUser(auditorUser, identity.RoleAuditor, "auditor@example.test", "example.test")
	f.addUser(plainUser, identity.RoleUser, userAddress, "example.test")
	f.addUser(customerAdmin, identity.RoleAdmin, "", "example.test")
	f.cfg = app.ExportsConfig{Dir: filepath.Join(f.dataDir, "export"), Workers: 4,
		ProgressInterval: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	var err error
	f.app, err = app.New(f.store, f.signer, app.ApplicationConfig{Archive: f.arc, Exports: &f.cfg, Multitenancy: f.multi})
	require.NoError(t, err)
	require.NotNil(t, f.app.Exports)
	f.api.Attach(f.app)
	return f
}

// slowExports replaces the exports with ones that read each message after pause.
func (f *exportFixture) slowExports(pause time.Duration) {
	f.t.Helper()
	f.slow = &pausingArchive{Archive: f.arc}
	f.slow.pause.Store(int64(pause))
	x, err := app.NewExports(f.store, f.slow, f.cfg)
	require.NoError(f.t, err)
	f.app.Exports = x
}

// start runs the export scheduler consumer (the real Background) and the runs
// (Exports.Run) until the test ends, as serve does.
func (f *exportFixture) start() {
	f.t.Helper()
	bg, err := app.NewBackground(f.store, app.BackgroundConfig{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(f.t, err)
	x := f.app.Exports
	x.Register(bg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- bg.Run(ctx) }()
	go func() { done <- x.Run(ctx) }()
	<-bg.Running()
	f.t.Cleanup(func() {
		cancel()
		require.NoError(f.t, <-done)
		require.NoError(f.t, <-done)
	})
}

// generate archives n generated messages (zero to two attachments each, with their
// envelope recipients) among pool in tenant, and returns them with their ids.
func (f *exportFixture) generate(tenant string, n int, pool []string) ([]archivetest.Mail, []int64) {
	f.t.Helper()
	mail := archivetest.GenerateMail(rand.New(rand.NewSource(int64(n))), n, pool, day)
	batch := make([]*archive.Prepared, n)
	for i, m := range mail {
		p, err := f.arc.Prepare(archive.Incoming{Tenant: tenant, Raw: m.Raw, Envelope: m.Envelope, Source: fmt.Sprintf("gen-%d", i)})
		require.NoError(f.t, err)
		batch[i] = p
	}
	res, err := f.arc.Commit(context.Background(), batch)
	require.NoError(f.t, err)
	ids := make([]int64, n)
	for i, r := range res {
		require.False(f.t, r.Duplicate, "message %d is a duplicate", i)
		ids[i] = r.ID
	}
	return mail, ids
}

// importCorpus imports the shared corpus into tenant and returns the ids.
func (f *exportFixture) importCorpus(tenant string) []int64 {
	f.t.Helper()
	im := &archive.Importer{Archive: f.arc, Workers: 2, BatchSize: 32}
	rep, err := im.Import(context.Background(), tenant, []string{archivetest.CorpusDir(f.t)})
	require.NoError(f.t, err)
	require.Greater(f.t, len(rep.IDs), 100, "corpus messages imported")
	return rep.IDs
}

// createExport posts body as user and requires 201 with a pending export.
func (f *exportFixture) createExport(user string, body any) exportJSON {
	f.t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(f.t, err)
	resp, out := f.postAs(user, exportPath, string(raw))
	require.Equal(f.t, http.StatusCreated, resp.StatusCode, "create: %s", out)
	var v exportJSON
	decode(f.t, out, &v)
	require.Equal(f.t, exportsPath+"/"+v.JobID, resp.Header.Get("Location"))
	require.Equal(f.t, "pending", v.Status)
	return v
}

// getExport reads one export as user, requiring 200.
func (f *exportFixture) getExport(user, jobID string) exportJSON {
	f.t.Helper()
	resp, raw := f.getAs(user, exportsPath+"/"+jobID)
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "get %s: %s", jobID, raw)
	var v exportJSON
	decode(f.t, raw, &v)
	return v
}

// awaitExport polls the export over HTTP until it reaches one of statuses.
func (f *exportFixture) awaitExport(user, jobID string, statuses ...string) exportJSON {
	f.t.Helper()
	var v exportJSON
	require.Eventually(f.t, func() bool {
		v = f.getExport(user, jobID)
		return slices.Contains(statuses, v.Status)
	}, 60*time.Second, 10*time.Millisecond, "export %s never reached %v", jobID, statuses)
	return v
}

// listExports lists path (the auditor's or the admin's list) as user.
func (f *exportFixture) listExports(user, path string) []exportJSON {
	f.t.Helper()
	resp, raw := f.getAs(user, path)
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "list %s: %s", path, raw)
	var out struct {
		Exports []exportJSON `json:"exports"`
	}
	decode(f.t, raw, &out)
	require.NotNil(f.t, out.Exports, "exports is [], never null: %s", raw)
	return out.Exports
}

// prefixes lists the Bates prefixes of path as user.
func (f *exportFixture) prefixes(user, path string) []prefixJSON {
	f.t.Helper()
	resp, raw := f.getAs(user, path)
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "prefixes %s: %s", path, raw)
	var out struct {
		Prefixes []prefixJSON `json:"prefixes"`
	}
	decode(f.t, raw, &out)
	require.NotNil(f.t, out.Prefixes, "prefixes is [], never null: %s", raw)
	return out.Prefixes
}

// jobIDs lists the job ids of exports, in order.
func jobIDs(exports []exportJSON) []string {
	out := make([]string, len(exports))
	for i, e := range exports {
		out[i] = e.JobID
	}
	return out
}

// jobDir is the production directory of a job.
func (f *exportFixture) jobDir(tenant, jobID string) string {
	return filepath.Join(f.cfg.Dir, tenant, "ediscovery", jobID)
}

// unzipAll reads every entry of a ZIP archive, requiring it valid and every name once.
func unzipAll(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err, "the download is a valid ZIP")
	out := map[string][]byte{}
	for _, zf := range zr.File {
		require.NotContains(t, out, zf.Name, "entry named twice")
		rc, err := zf.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err, "entry %s (its CRC is checked at the end)", zf.Name)
		require.NoError(t, rc.Close())
		out[zf.Name] = b
	}
	return out
}

// idsFrom returns n ids starting at first, as email_ids.
func idsFrom(first int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = first + int64(i)
	}
	return out
}

// exportBody is a minimal configuration object for ids on prefix.
func exportBody(prefix string, ids []int64) map[string]any {
	return map[string]any{"bates_prefix": prefix, "email_ids": ids}
}

// countRows counts the rows of a query.
func (f *exportFixture) countRows(q string, args ...any) int {
	f.t.Helper()
	var n int
	require.NoError(f.t, f.db.QueryRow(f.db.Rebind(q), args...).Scan(&n), "%s", q)
	return n
}

// sprint formats an id for a path.
func sprint(id int64) string { return fmt.Sprint(id) }
