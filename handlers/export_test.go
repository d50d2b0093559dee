package handlers

import "github.com/gorilla/mux"

// RouteTemplates lists the path templates of every route the server serves, for the tests
// that must cover each one (the tenant-isolation matrix).
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
