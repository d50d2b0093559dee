package console

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/domain/fault"
)

// The eDiscovery pages (menu eDiscovery), with the roles and tenants of the API's
// /api/v1/ediscovery routes (app.Scope.ExportTenant): auditors work on their own tenant's
// exports, everybody else is forbidden; another tenant's export is not found. Cancel and
// delete are POSTs with the session's CSRF token, after a confirm page.

const exportsPath = "/compliance/exports"

// refreshSeconds is how often a page of a pending or running export reloads itself.
const refreshSeconds = 3

// errExportsOff: the application runs without the exports (no DIR_EXPORT), as the API's 503.
var errExportsOff = fault.New(fault.Unavailable, "eDiscovery exports are not available on this server")

func (s *Server) exportRoutes(r *mux.Router) {
	const one = exportsPath + "/{job_id}"
	r.Handle(exportsPath, methods{get: s.withExports(s.listExports)})
	r.Handle(exportsPath+"/new", methods{get: s.withExports(s.exportDialog), post: s.withExports(s.createExport)})
	r.Handle(one, methods{get: s.withExports(s.showExport)})
	r.Handle(one+"/download", methods{get: s.withExports(s.downloadExport)})
	r.Handle(one+"/{action:cancel|delete}", methods{get: s.withExports(s.confirmExportAction), post: s.withExports(s.exportAction)})
}

// withExports admits, beyond withSession, only the callers app.Scope.ExportTenant admits,
// and hands fn the exports and that tenant.
func (s *Server) withExports(fn func(w http.ResponseWriter, r *http.Request, c *call, x *app.Exports, tenant string)) http.HandlerFunc {
	return s.withSession(func(w http.ResponseWriter, r *http.Request, c *call) {
		tenant, err := c.scope.ExportTenant()
		if err == nil && c.app.Exports == nil {
			err = errExportsOff
		}
		if err != nil {
			s.fail(w, r, c, err)
			return
		}
		fn(w, r, c, c.app.Exports, tenant)
	})
}

// running reports a job that is still to make progress (the page reloads itself).
func running(status string) bool {
	return status == export.StatusPending || status == export.StatusRunning
}

// exportListPage is the tenant's exports.
type exportListPage struct {
	Exports []app.ExportView
	Refresh int
}

// RefreshSeconds makes the layout reload the page while a job runs.
func (p exportListPage) RefreshSeconds() int { return p.Refresh }

func (s *Server) listExports(w http.ResponseWriter, r *http.Request, c *call, x *app.Exports, tenant string) {
	list, err := x.List(r.Context(), tenant)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	page := exportListPage{Exports: list.Exports}
	for _, v := range list.Exports {
		if running(v.Status) {
			page.Refresh = refreshSeconds
		}
	}
	s.render(w, r, c, http.StatusOK, "exports", "eDiscovery exports", page)
}

// exportPage is one export: its options, progress, counts, problems and download log.
type exportPage struct {
	Export    *app.ExportView
	Path      string
	Problems  []app.ItemProblem
	Downloads []app.DownloadRecord
	Refresh   int
}

// RefreshSeconds makes the layout reload the page while the job runs.
func (p exportPage) RefreshSeconds() int { return p.Refresh }

// Percent is the progress in whole percent.
func (p exportPage) Percent() int { return int(p.Export.Progress * 100) }

func (s *Server) showExport(w http.ResponseWriter, r *http.Request, c *call, x *app.Exports, tenant string) {
	ctx, jobID := r.Context(), mux.Vars(r)["job_id"]
	v, err := x.Get(ctx, tenant, jobID)
	page := exportPage{Export: v, Path: exportsPath + "/" + url.PathEscape(jobID)}
	if err == nil {
		page.Problems, err = x.ItemProblems(ctx, tenant, jobID)
	}
	if err == nil {
		page.Downloads, err = x.DownloadLog(ctx, tenant, jobID)
	}
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	if running(v.Status) {
		page.Refresh = refreshSeconds
	}
	s.render(w, r, c, http.StatusOK, "export", "Export "+v.JobID, page)
}

// downloadExport streams the ZIP of a completed export through the API's use case, which
// records the download (user, time, client IP, user agent) before the first byte. A
// failure after the first byte cuts the connection, as the API does.
func (s *Server) downloadExport(w http.ResponseWriter, r *http.Request, c *call, x *app.Exports, tenant string) {
	if r.Method != http.MethodGet { // a HEAD would record a download without one
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	jobID := mux.Vars(r)["job_id"]
	d, err := x.OpenDownload(r.Context(), tenant, jobID, metadata(r, w, c))
	if err != nil {
		if errors.Is(err, app.ErrProductionMissing) {
			s.logger.ErrorContext(r.Context(), "console: export files missing", "job_id", jobID, "error", err.Error())
		}
		s.fail(w, r, c, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", d.ContentType())
	h.Set("Content-Disposition", d.ContentDisposition())
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if n, err := d.Stream(r.Context(), w); err != nil {
		s.logger.WarnContext(r.Context(), "console: export download aborted", "job_id", jobID, "bytes", n, "error", err.Error())
		panic(http.ErrAbortHandler)
	}
}

// confirmExportAction asks to confirm the cancel or delete of an export.
func (s *Server) confirmExportAction(w http.ResponseWriter, r *http.Request, c *call, x *app.Exports, tenant string) {
	v, err := x.Get(r.Context(), tenant, mux.Vars(r)["job_id"])
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	action := mux.Vars(r)["action"]
	s.render(w, r, c, http.StatusOK, "export_confirm", "Confirm: "+action+" export", struct {
		Export *app.ExportView
		Action string
		Path   string
	}{v, action, exportsPath + "/" + url.PathEscape(v.JobID)})
}

// exportAction cancels or deletes an export (app.Exports decides whether its state
// allows it: 409 otherwise) and goes to its page, or to the list after a delete.
func (s *Server) exportAction(w http.ResponseWriter, r *http.Request, c *call, x *app.Exports, tenant string) {
	jobID, md := mux.Vars(r)["job_id"], metadata(r, w, c)
	var err error
	target := exportsPath + "/" + url.PathEscape(jobID)
	if mux.Vars(r)["action"] == "cancel" {
		_, err = x.Cancel(r.Context(), tenant, jobID, md)
	} else {
		err, target = x.Delete(r.Context(), tenant, jobID, md), exportsPath
	}
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}
