package app_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/export"
)

// exportFixture is the export feature over a fresh database, archive and ledger, with the
// erasure workflow beside it (to erase mail).
type exportFixture struct {
	*erasureFixture
	x    *app.Exports
	cfg  app.ExportsConfig
	slow *slowArchive // the archive as the exports read it
}

// slowArchive is the real archive, read with a pause before each message, so that a job
// runs long enough to be cancelled or deleted while it runs. It counts the reads.
type slowArchive struct {
	*archive.Archive
	pause atomic.Int64 // a time.Duration
	reads atomic.Int64
}

func (s *slowArchive) ReadDocument(ctx context.Context, tenant string, id int64) (*archive.Document, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Archive.ReadDocument(ctx, tenant, id)
}

func (s *slowArchive) ReadNative(ctx context.Context, tenant string, id int64) (*archive.Document, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Archive.ReadNative(ctx, tenant, id)
}

// wait counts a read and pauses before it.
func (s *slowArchive) wait(ctx context.Context) error {
	s.reads.Add(1)
	if pause := time.Duration(s.pause.Load()); pause > 0 {
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func newExportFixture(t *testing.T, d database.Dialect, cfg app.ExportsConfig) *exportFixture {
	t.Helper()
	return openExportFixture(t, dbtest.Open(t, d), t.TempDir(), cfg)
}

// openExportFixture wires the exports over db, with files and keys under dataDir and
// productions under dataDir/export.
func openExportFixture(t *testing.T, db *database.DB, dataDir string, cfg app.ExportsConfig) *exportFixture {
	t.Helper()
	f := &exportFixture{erasureFixture: openErasureFixture(t, db, dataDir, app.ErasureConfig{})}
	cfg.Dir = filepath.Join(dataDir, "export")
	cfg.Logger = slog.New(slog.DiscardHandler)
	f.slow = &slowArchive{Archive: f.arc}
	var err error
	f.x, err = app.NewExports(f.store, f.slow, cfg)
	require.NoError(t, err)
	f.cfg = cfg
	return f
}

// start runs the exports (Run) and their scheduler consumer (Background) until the test
// ends or the returned function is called.
func (f *exportFixture) start() (stop func()) {
	f.t.Helper()
	bg, err := app.NewBackground(f.store, app.BackgroundConfig{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(f.t, err)
	f.x.Register(bg)
	ctx, cancel := f.ctxWithCancel()
	done := make(chan error, 2)
	go func() { done <- bg.Run(ctx) }()
	go func() { done <- f.x.Run(ctx) }()
	<-bg.Running()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			require.NoError(f.t, <-done)
			require.NoError(f.t, <-done)
		}
	}
	f.t.Cleanup(stop)
	return stop
}

func (f *exportFixture) createExport(tenant string, req export.Request) *app.ExportView {
	f.t.Helper()
	v, err := f.x.Create(f.ctx, tenant, req, actor("auditor"))
	require.NoError(f.t, err)
	require.Equal(f.t, export.StatusPending, v.Status)
	return v
}

// awaitExport waits until the job reaches one of statuses.
func (f *exportFixture) awaitExport(tenant, jobID string, statuses ...string) *app.ExportView {
	f.t.Helper()
	var v *app.ExportView
	require.Eventually(f.t, func() bool {
		var err error
		v, err = f.x.Get(f.ctx, tenant, jobID)
		require.NoError(f.t, err)
		return slices.Contains(statuses, v.Status)
	}, 60*time.Second, 5*time.Millisecond, "export %s never reached %v", jobID, statuses)
	return v
}

// download downloads a completed job and opens its ZIP.
func (f *exportFixture) download(tenant, jobID string) map[string][]byte {
	f.t.Helper()
	var buf bytes.Buffer
	require.NoError(f.t, f.x.Download(f.ctx, tenant, jobID, actor("auditor"), &buf))
	return unzip(f.t, buf.Bytes())
}

// unzip reads every entry of a ZIP archive, failing on an invalid archive or a name used
// twice.
func unzip(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err, "the download is a valid ZIP")
	out := map[string][]byte{}
	for _, zf := range zr.File {
		require.NotContains(t, out, zf.Name, "entry named twice")
		require.False(t, strings.HasPrefix(zf.Name, "/") || strings.Contains(zf.Name, ".."), "unsafe entry %q", zf.Name)
		rc, err := zf.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err, "entry %s (its CRC is checked at the end)", zf.Name)
		require.NoError(t, rc.Close())
		out[zf.Name] = b
	}
	return out
}

// strPtr and boolPtr build request fields.
func strPtr(s string) *string { return &s }
func boolPtr(b bool) *bool    { return &b }
func intPtr(n int) *int       { return &n }
func int64Ptr(n int64) *int64 { return &n }

// request is a request for ids on prefix with the defaults.
func request(prefix string, ids []int64) export.Request {
	return export.Request{BatesPrefix: strPtr(prefix), EmailIDs: ids}
}

// rows reads every row of a query as comparable values.
func (f *exportFixture) rows(q string) [][]any {
	f.t.Helper()
	rows, err := f.db.Query(q)
	require.NoError(f.t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(f.t, err)
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(f.t, rows.Scan(ptrs...))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		out = append(out, vals)
	}
	require.NoError(f.t, rows.Err())
	return out
}
