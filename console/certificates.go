package console

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"
)

// certificateCSP lets the certificate page use its own inline styles and nothing else
// (as the API serves it).
const certificateCSP = "default-src 'none'; style-src 'unsafe-inline'"

// certificateRoutes serve a completed request's certificate through the same use cases as
// the API (app.Certificates): the printable page, its PDF and the verification bundle.
func (s *Server) certificateRoutes(r *mux.Router, one string) {
	r.Handle(one+"/certificate", methods{get: s.withCompliance(s.certificate("html"))})
	r.Handle(one+"/certificate/pdf", methods{get: s.withCompliance(s.certificate("pdf"))})
	r.Handle(one+"/certificate/bundle", methods{get: s.withCompliance(s.certificate("bundle"))})
}

func (s *Server) certificate(format string) func(http.ResponseWriter, *http.Request, *call, string) {
	return func(w http.ResponseWriter, r *http.Request, c *call, tenant string) {
		id := mux.Vars(r)["request_id"]
		var body []byte
		var err error
		contentType, disposition := "text/html; charset=utf-8", ""
		switch format {
		case "html":
			body, err = c.app.Certificates.HTML(r.Context(), tenant, id)
		case "pdf":
			body, err = c.app.Certificates.PDF(r.Context(), tenant, id)
			contentType, disposition = "application/pdf", fmt.Sprintf(`attachment; filename="%s.pdf"`, id)
		case "bundle":
			body, err = s.bundle(r, c, tenant, id)
			contentType, disposition = "application/json", fmt.Sprintf(`attachment; filename="%s.bundle.json"`, id)
		}
		if err != nil {
			s.fail(w, r, c, err)
			return
		}
		w.Header().Set("Content-Security-Policy", certificateCSP)
		w.Header().Set("Content-Type", contentType)
		if disposition != "" {
			w.Header().Set("Content-Disposition", disposition)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}
}

func (s *Server) bundle(r *http.Request, c *call, tenant, id string) ([]byte, error) {
	b, err := c.app.Certificates.Bundle(r.Context(), tenant, id)
	if err != nil {
		return nil, err
	}
	body, err := b.JSON()
	if err != nil {
		return nil, fmt.Errorf("certificate bundle %s: %w", id, err)
	}
	return body, nil
}
