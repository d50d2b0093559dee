package handlers

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
)

// The certificate routes of completed erasure requests: the printable HTML page, its PDF
// (through the service at PDFSERVICE_URL) and the bundle that a regulator checks offline
// with `mailledger verify-certificate`. Roles and tenants as for the other erasure routes.

// certificateCSP lets the certificate page use its own inline styles and nothing else.
const certificateCSP = "default-src 'none'; style-src 'unsafe-inline'"

func (s *Server) certificateRoutes(api *mux.Router, one string) {
	api.Handle(one+"/certificate", withQuery(onlyGET(s.certificateHTML), "tenant"))
	api.Handle(one+"/certificate/pdf", withQuery(onlyGET(s.certificatePDF), "tenant"))
	api.Handle(one+"/certificate/bundle", withQuery(onlyGET(s.certificateBundle), "tenant"))
}

// certificateHTML answers GET …/certificate: 200 text/html, 409 certificate_not_available
// unless the request is completed.
func (s *Server) certificateHTML(w http.ResponseWriter, r *http.Request) {
	certs, scope, id, ok := s.certificates(w, r)
	if !ok {
		return
	}
	page, err := certs.HTML(r.Context(), scope, id)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	w.Header().Set("Content-Security-Policy", certificateCSP)
	writeBytes(w, "text/html; charset=utf-8", "", page)
}

// certificatePDF answers GET …/certificate/pdf: 200 application/pdf, or 503
// pdf_service_unavailable when PDFSERVICE_URL is unset, down or failing.
func (s *Server) certificatePDF(w http.ResponseWriter, r *http.Request) {
	certs, scope, id, ok := s.certificates(w, r)
	if !ok {
		return
	}
	pdf, err := certs.PDF(r.Context(), scope, id)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeBytes(w, "application/pdf", fmt.Sprintf(`inline; filename="%s.pdf"`, id), pdf)
}

// certificateBundle answers GET …/certificate/bundle with the verification bundle as JSON.
func (s *Server) certificateBundle(w http.ResponseWriter, r *http.Request) {
	certs, scope, id, ok := s.certificates(w, r)
	if !ok {
		return
	}
	bundle, err := certs.Bundle(r.Context(), scope, id)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	body, err := bundle.JSON()
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeBytes(w, "application/json", fmt.Sprintf(`inline; filename="%s.bundle.json"`, id), body)
}

// certificates returns the certificate use cases, the caller's tenant scope and the
// request id of the route.
func (s *Server) certificates(w http.ResponseWriter, r *http.Request) (*app.Certificates, string, string, bool) {
	scope, ok := s.holdScope(w, r)
	if !ok {
		return nil, "", "", false
	}
	return s.app.Load().Certificates, scope, mux.Vars(r)["request_id"], true
}

// writeBytes answers 200 with body of contentType, and a Content-Disposition unless
// disposition is empty.
func writeBytes(w http.ResponseWriter, contentType, disposition string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	if disposition != "" {
		w.Header().Set("Content-Disposition", disposition)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
