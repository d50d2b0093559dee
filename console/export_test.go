package console

import "github.com/gorilla/mux"

// RouteTemplates lists the path template of every route of s, for the role matrix.
func RouteTemplates(s *Server) []string {
	var out []string
	_ = s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		if t, err := route.GetPathTemplate(); err == nil && route.GetHandler() != nil {
			out = append(out, t)
		}
		return nil
	})
	return out
}

// SanitizeHTML is sanitizeHTML, for the sanitiser's own test.
func SanitizeHTML(raw string) string { return string(sanitizeHTML(raw)) }
