package handlers

import (
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain/export"
)

// The eDiscovery routes (docs/api.md, "eDiscovery exports"). The routes
// under /api/v1/ediscovery are the auditors': an auditor works on the exports of their own
// tenant, and everybody else, administrators included, is forbidden. Another tenant's
// export is not found, never forbidden. The routes under /api/v1/admin/ediscovery are the
// global administrator's: every tenant's exports and Bates prefixes, read only. Every
// action (creation, cancel, delete, download) records the caller, the client IP, the user
// agent and the correlation id in its ledger event.

const exportsPath = "/api/v1/ediscovery/exports"

func (s *Server) ediscoveryRoutes(api *mux.Router) {
	const one = "/ediscovery/exports/{job_id}"
	api.Handle("/ediscovery/export", withQuery(onlyPOST(s.createExport)))
	api.Handle("/ediscovery/exports", withQuery(onlyGET(s.listExports)))
	api.Handle(one, withQuery(getOrDELETE(s.getExport, s.deleteExport)))
	api.Handle(one+"/cancel", withQuery(onlyPOST(s.cancelExport)))
	api.Handle(one+"/download", s.streaming(withQuery(strictGET(s.downloadExport))))
	api.Handle("/ediscovery/bates-prefixes", withQuery(onlyGET(s.listBatesPrefixes)))
	api.Handle("/admin/ediscovery/exports", withQuery(onlyGET(s.adminListExports), "tenant"))
	api.Handle("/admin/ediscovery/bates-prefixes", withQuery(onlyGET(s.adminBatesPrefixes), "tenant"))
}

// exportJSON is an export job as the API shows it (docs/api.md): the columns of
// ediscovery_exports with the configuration object in place of config_json, unset values
// null, times RFC 3339 in UTC, plus progress (0..1).
type exportJSON struct {
	ID           int64         `json:"id"`
	JobID        string        `json:"job_id"`
	TenantID     string        `json:"tenant_id"`
	Status       string        `json:"status"`
	BatesPrefix  string        `json:"bates_prefix"`
	BatesStart   int64         `json:"bates_start"`
	BatesEnd     *int64        `json:"bates_end"`
	TotalEmails  int           `json:"total_emails"`
	Processed    int           `json:"processed"`
	Failed       int           `json:"failed"`
	Config       export.Config `json:"config"`
	OutputPath   string        `json:"output_path"`
	OutputSize   *int64        `json:"output_size"`
	ErrorMessage *string       `json:"error_message"`
	CreatedBy    string        `json:"created_by"`
	CreatedAt    string        `json:"created_at"`
	StartedAt    *string       `json:"started_at"`
	CompletedAt  *string       `json:"completed_at"`
	ManifestHash *string       `json:"manifest_hash"`
	Progress     float64       `json:"progress"`
}

func exportView(v *app.ExportView) exportJSON {
	cfg := v.Config
	if cfg.EmailIDs == nil {
		cfg.EmailIDs = []int64{}
	}
	return exportJSON{ID: v.ID, JobID: v.JobID, TenantID: v.TenantID, Status: v.Status, BatesPrefix: v.BatesPrefix,
		BatesStart: v.BatesStart, BatesEnd: v.BatesEnd, TotalEmails: v.TotalEmails, Processed: v.Processed,
		Failed: v.Failed, Config: cfg, OutputPath: v.OutputPath, OutputSize: v.OutputSize,
		ErrorMessage: v.ErrorMessage, CreatedBy: v.CreatedBy, CreatedAt: rfc3339(v.CreatedAt),
		StartedAt: rfc3339Ptr(v.StartedAt), CompletedAt: rfc3339Ptr(v.CompletedAt),
		ManifestHash: v.ManifestHash, Progress: v.Progress}
}

// batesPrefixJSON is one Bates prefix sequence.
type batesPrefixJSON struct {
	Prefix     string `json:"prefix"`
	LastNumber int64  `json:"last_number"`
	UpdatedAt  string `json:"updated_at"`
}

// createExport answers POST /api/v1/ediscovery/export: 201 with the export (pending) and
// its Location. The body is the configuration object of docs/api.md; absent fields take their
// defaults, and every bad value is named in one 400 validation_failed.
func (s *Server) createExport(w http.ResponseWriter, r *http.Request) {
	x, tenant, ok := s.auditorExports(w, r)
	if !ok {
		return
	}
	var req exportRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	v, err := x.Create(r.Context(), tenant, req.request(), metadata(r))
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	w.Header().Set("Location", exportsPath+"/"+url.PathEscape(v.JobID))
	writeJSON(w, http.StatusCreated, exportView(v))
}

// listExports answers GET /api/v1/ediscovery/exports with the caller's tenant's exports,
// newest first.
func (s *Server) listExports(w http.ResponseWriter, r *http.Request) {
	x, tenant, ok := s.auditorExports(w, r)
	if ok {
		s.writeExportList(w, r, x, tenant)
	}
}

// getExport answers GET /api/v1/ediscovery/exports/{job_id}.
func (s *Server) getExport(w http.ResponseWriter, r *http.Request) {
	x, tenant, ok := s.auditorExports(w, r)
	if !ok {
		return
	}
	v, err := x.Get(r.Context(), tenant, mux.Vars(r)["job_id"])
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, exportView(v))
}

// cancelExport answers POST …/{job_id}/cancel: 200 with the export, cancelled, from
// pending or running (a running job's workers stop and its partial output is removed);
// 409 invalid_transition from any other state.
func (s *Server) cancelExport(w http.ResponseWriter, r *http.Request) {
	x, tenant, ok := s.auditorExports(w, r)
	if !ok {
		return
	}
	v, err := x.Cancel(r.Context(), tenant, mux.Vars(r)["job_id"], metadata(r))
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, exportView(v))
}

// deleteExport answers DELETE …/{job_id}: 204 once the export's files are removed; 409
// invalid_transition while it runs (cancel it first). The export is then not found; its
// Bates numbers stay consumed and its download log stays.
func (s *Server) deleteExport(w http.ResponseWriter, r *http.Request) {
	x, tenant, ok := s.auditorExports(w, r)
	if !ok {
		return
	}
	if err := x.Delete(r.Context(), tenant, mux.Vars(r)["job_id"], metadata(r)); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listBatesPrefixes answers GET /api/v1/ediscovery/bates-prefixes with the prefixes the
// caller's tenant has used.
func (s *Server) listBatesPrefixes(w http.ResponseWriter, r *http.Request) {
	x, tenant, ok := s.auditorExports(w, r)
	if ok {
		s.writeBatesPrefixes(w, r, x, tenant)
	}
}

// adminListExports answers GET /api/v1/admin/ediscovery/exports with every tenant's
// exports (or those of `?tenant=`), newest first.
func (s *Server) adminListExports(w http.ResponseWriter, r *http.Request) {
	x, scope, ok := s.adminExports(w, r)
	if ok {
		s.writeExportList(w, r, x, scope)
	}
}

// adminBatesPrefixes answers GET /api/v1/admin/ediscovery/bates-prefixes with every
// prefix (or those `?tenant=` used).
func (s *Server) adminBatesPrefixes(w http.ResponseWriter, r *http.Request) {
	x, scope, ok := s.adminExports(w, r)
	if ok {
		s.writeBatesPrefixes(w, r, x, scope)
	}
}

func (s *Server) writeExportList(w http.ResponseWriter, r *http.Request, x *app.Exports, scope string) {
	list, err := x.List(r.Context(), scope)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	out := make([]exportJSON, len(list.Exports))
	for i := range list.Exports {
		out[i] = exportView(&list.Exports[i])
	}
	writeJSON(w, http.StatusOK, map[string][]exportJSON{"exports": out})
}

func (s *Server) writeBatesPrefixes(w http.ResponseWriter, r *http.Request, x *app.Exports, scope string) {
	list, err := x.BatesPrefixes(r.Context(), scope)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	out := make([]batesPrefixJSON, len(list.Prefixes))
	for i, p := range list.Prefixes {
		out[i] = batesPrefixJSON{Prefix: p.Prefix, LastNumber: p.LastNumber, UpdatedAt: rfc3339(p.UpdatedAt)}
	}
	writeJSON(w, http.StatusOK, map[string][]batesPrefixJSON{"prefixes": out})
}

// auditorExports admits auditors only (app.Scope.ExportTenant, which the web console asks
// too; docs/api.md: administrators are not auditors here) and returns the exports and the
// caller's tenant; 403 for everybody else, then 503 when the service runs without the
// exports.
func (s *Server) auditorExports(w http.ResponseWriter, r *http.Request) (*app.Exports, string, bool) {
	tenant, err := caller(r).Scope.ExportTenant()
	if err != nil {
		writeError(w, r, s.logger, ErrForbidden)
		return nil, "", false
	}
	return s.exports(w, r, tenant)
}

// adminExports admits the global administrator only and returns the exports and the
// scope: every tenant, or the one of `?tenant=`.
func (s *Server) adminExports(w http.ResponseWriter, r *http.Request) (*app.Exports, string, bool) {
	c := caller(r)
	if !c.IsGlobalAdmin() {
		writeError(w, r, s.logger, ErrForbidden)
		return nil, "", false
	}
	scope := app.AllTenants
	if r.URL.Query().Has("tenant") {
		var err error
		if scope, err = s.tenantParam(r, c); err != nil {
			writeError(w, r, s.logger, err)
			return nil, "", false
		}
	}
	return s.exports(w, r, scope)
}

func (s *Server) exports(w http.ResponseWriter, r *http.Request, scope string) (*app.Exports, string, bool) {
	x := s.app.Load().Exports
	if x == nil {
		writeError(w, r, s.logger, ErrExportsUnavailable)
		return nil, "", false
	}
	return x, scope, true
}

// getOrDELETE routes GET (and HEAD) to get and DELETE to del, and answers 405 otherwise.
func getOrDELETE(get, del http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			get(w, r)
		case http.MethodDelete:
			del(w, r)
		default:
			methodNotAllowed(w, r, "GET, HEAD, DELETE")
		}
	})
}

// strictGET answers 405 to every method but GET, HEAD included: for a route whose GET
// has an effect (a download is recorded), a HEAD must not have it without a body.
func strictGET(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			methodNotAllowed(w, r, "GET")
			return
		}
		next(w, r)
	})
}
