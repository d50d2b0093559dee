package handlers

import (
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
)

// downloadExport answers GET /api/v1/ediscovery/exports/{job_id}/download with the ZIP of
// a completed export, streamed from DIR_EXPORT as it is read (no temporary copy, no
// Content-Length): 200 application/zip with a Content-Disposition file name. The download
// is recorded (user, time, client IP, user agent) in the download log and the ledger
// before the first byte is sent. 409 export_not_ready unless the export is completed;
// 410 export_files_missing when its directory was removed behind the service's back.
//
// A failure after the first byte cannot change the status any more: the connection is
// then cut, so that the client sees an incomplete download instead of a short ZIP that
// looks whole.
func (s *Server) downloadExport(w http.ResponseWriter, r *http.Request) {
	x, tenant, ok := s.auditorExports(w, r)
	if !ok {
		return
	}
	jobID := mux.Vars(r)["job_id"]
	d, err := x.OpenDownload(r.Context(), tenant, jobID, metadata(r))
	if err != nil {
		if errors.Is(err, app.ErrProductionMissing) {
			s.logger.ErrorContext(r.Context(), "export files missing", "job_id", jobID, "error", err.Error())
		}
		writeError(w, r, s.logger, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", d.ContentType())
	h.Set("Content-Disposition", d.ContentDisposition())
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	n, err := d.Stream(r.Context(), w)
	if err != nil {
		s.logger.WarnContext(r.Context(), "export download aborted", "job_id", jobID, "bytes", n,
			"request_id", requestID(r.Context()), "error", err.Error())
		panic(http.ErrAbortHandler)
	}
}
