package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/handlers"
	"github.com/mailledger/mailledger/identity"
)

// The auditor of the HTTP download.
const (
	benchUser     = "bench-auditor"
	benchPassword = "bench-password"
)

// zipResult holds the median of each way of zipping the production.
type zipResult struct {
	stream   time.Duration // ExportDownload.Stream to io.Discard
	http     time.Duration // GET …/download over loopback HTTP, body read to io.Discard
	zip      time.Duration // zip -0 -r -q - . > /dev/null in the job directory; 0 when skipped
	zipBytes int64         // bytes of our ZIP
	zipSkip  string        // why zip was not run
}

// zipRounds measures, cfg.rounds times each and interleaved, the streamed ZIP in process,
// the download over HTTP through the real handlers, and `zip -0 -r` of the same directory.
func (e *benchEnv) zipRounds(ctx context.Context, cfg *config, ex *exporter, job exportResult) (zipResult, error) {
	var res zipResult
	srv, err := e.serveAPI(ctx, ex)
	if err != nil {
		return res, err
	}
	defer srv.Close()
	zipPath, lookErr := exec.LookPath(cfg.zipCmd)
	if lookErr != nil {
		res.zipSkip = lookErr.Error()
	}
	var streams, gets, zips []time.Duration
	for range cfg.rounds {
		d, n, err := streamOnce(ctx, ex.x, job.jobID)
		if err != nil {
			return res, err
		}
		streams, res.zipBytes = append(streams, d), n
		if d, err = getOnce(ctx, srv, job.jobID, n); err != nil {
			return res, err
		}
		gets = append(gets, d)
		if zipPath != "" {
			if d, err = zipOnce(ctx, zipPath, filepath.Join(e.exportDir, tenant, "ediscovery", job.jobID)); err != nil {
				return res, err
			}
			zips = append(zips, d)
		}
	}
	res.stream, res.http, res.zip = median(streams), median(gets), median(zips)
	return res, nil
}

func streamOnce(ctx context.Context, x *app.Exports, jobID string) (time.Duration, int64, error) {
	start := time.Now()
	d, err := x.OpenDownload(ctx, tenant, jobID, domain.Metadata{Actor: "exportbench"})
	if err != nil {
		return 0, 0, err
	}
	n, err := d.Stream(ctx, io.Discard)
	return time.Since(start), n, err
}

func getOnce(ctx context.Context, srv *httptest.Server, jobID string, want int64) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/ediscovery/exports/"+jobID+"/download", nil)
	if err != nil {
		return 0, err
	}
	req.SetBasicAuth(benchUser, benchPassword)
	start := time.Now()
	resp, err := srv.Client().Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	took := time.Since(start)
	if err == nil && (resp.StatusCode != http.StatusOK || n != want) {
		err = fmt.Errorf("download: status %d, %d bytes; want 200, %d bytes", resp.StatusCode, n, want)
	}
	return took, err
}

func zipOnce(ctx context.Context, zipPath, dir string) (time.Duration, error) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, zipPath, "-0", "-r", "-q", "-", ".")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, null, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %w: %s", zipPath, err, stderr.String())
	}
	return time.Since(start), nil
}

// serveAPI serves the real handlers on loopback, with ex as the application's exports and
// an auditor to download with.
func (e *benchEnv) serveAPI(ctx context.Context, ex *exporter) (*httptest.Server, error) {
	hash, err := bcrypt.GenerateFromPassword([]byte(benchPassword), bcrypt.MinCost)
	if err != nil {
		return nil, err
	}
	users := identity.NewUsers(e.db.DB)
	if _, err := users.Add(ctx, identity.User{Username: benchUser, PasswordHash: string(hash), Role: identity.RoleAuditor,
		Domain: identity.LocalDomain}); err != nil {
		return nil, err
	}
	key, err := eventstore.LoadOrCreateKey(filepath.Join(e.dir, "keys"), "exportbench")
	if err != nil {
		return nil, err
	}
	signer, err := eventstore.NewSigner(ex.store, key, "exportbench")
	if err != nil {
		return nil, err
	}
	application, err := app.New(ex.store, signer, app.ApplicationConfig{Archive: e.arc})
	if err != nil {
		return nil, err
	}
	application.Exports = ex.x
	api, err := handlers.New(handlers.Options{Auth: identity.NewAuthenticator(users), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	api.Attach(application)
	return httptest.NewServer(api), nil
}

// median returns the middle duration (0 for none).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
