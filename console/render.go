package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain/fault"
)

//go:embed templates
var templateFiles embed.FS

// The console's own errors, each of a kind of domain/fault.
var (
	errNoPage   = fault.New(fault.NotFound, "no such page")
	errNotReady = fault.New(fault.Unavailable, "the service is starting: the database does not answer yet")
	errBadCSRF  = fault.New(fault.Forbidden, "the form is out of date or not from this site (CSRF token missing or wrong); nothing was changed")
)

// pages are the parsed templates: each page with the layout.
type pages struct {
	byName map[string]*template.Template
}

var funcs = template.FuncMap{
	"time": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"timep": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"str": func(s *string) string {
		if s == nil {
			return "—"
		}
		return *s
	},
	"date":    func(t time.Time) string { return t.UTC().Format(time.DateOnly) },
	"minutes": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"join":    strings.Join,
	"add":     func(a, b int) int { return a + b },
	"inc":     func(n int64) int64 { return n + 1 },
}

func parsePages() (*pages, error) {
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("console templates: %w", err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range names {
		if name == "templates/layout.html" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", name)
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", name, err)
		}
		p.byName[strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")] = t
	}
	return p, nil
}

// view is what the layout needs besides the page's own data.
type view struct {
	Title      string
	User       string
	Role       string
	CSRF       string
	Compliance bool
	Exports    bool
	// Admin shows the Administration menu (app.Management.Admits).
	Admin  bool
	Switch *tenantSwitch // the global administrator's tenant switch, nil for others
	// Refresh, when above 0, makes the page reload itself every so many seconds (a page
	// whose data has RefreshSeconds: an export that runs).
	Refresh int
	Data    any
}

// refresher is the data of a page that reloads itself while something runs.
type refresher interface{ RefreshSeconds() int }

// render writes page with data, status and the layout of c's user (c may be nil: the
// login form).
func (s *Server) render(w http.ResponseWriter, r *http.Request, c *call, status int, page, title string, data any) {
	v := view{Title: title, Data: data}
	if c != nil && c.sess != nil {
		v.User, v.Role, v.CSRF = c.sess.principal.Username, c.sess.principal.Role.String(), c.sess.csrf
		_, err := c.scope.ComplianceTenant()
		v.Compliance = c.app != nil && err == nil
		_, err = c.scope.ExportTenant()
		v.Exports = c.app != nil && c.app.Exports != nil && err == nil
		if v.Switch, err = switchFor(r, c); err != nil {
			s.logger.ErrorContext(r.Context(), "console: list the tenants", "error", err.Error())
		}
		v.Admin = c.app != nil && c.app.Management.Admits(app.Caller{Scope: c.scope}) == nil
	}
	if rf, ok := data.(refresher); ok {
		v.Refresh = rf.RefreshSeconds()
	}
	var buf bytes.Buffer
	if err := s.pages.byName[page].Execute(&buf, v); err != nil {
		s.logger.ErrorContext(r.Context(), "console: render", "page", page, "error", err.Error())
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// statusOf is the HTTP status of err's kind, as the API answers it.
var statusOf = map[fault.Kind]int{
	fault.Other: http.StatusInternalServerError, fault.Invalid: http.StatusBadRequest,
	fault.Unauthenticated: http.StatusUnauthorized, fault.Forbidden: http.StatusForbidden,
	fault.NotFound: http.StatusNotFound, fault.Conflict: http.StatusConflict, fault.Gone: http.StatusGone,
	fault.TooLarge: http.StatusRequestEntityTooLarge, fault.Timeout: http.StatusRequestTimeout,
	fault.RateLimited: http.StatusTooManyRequests, fault.Unavailable: http.StatusServiceUnavailable,
	fault.Integrity: http.StatusInternalServerError,
}

// problem is what the error page shows.
type problem struct {
	Status  int
	Message string
	Fields  map[string]string
}

// fail answers err as an error page with the status of its kind. A fault of the server
// (no kind, or integrity) is logged and shown without its text.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, c *call, err error) {
	kind := fault.KindOf(err)
	status, ok := statusOf[kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	p := problem{Status: status, Message: err.Error()}
	if kind == fault.NotFound {
		p.Message = "Not found: there is no such page, or it is not yours to see." // never say whether another tenant has it
	}
	if status == http.StatusInternalServerError {
		s.logger.ErrorContext(r.Context(), "console: request failed", "path", r.URL.Path, "error", err.Error())
		p.Message = "Something went wrong on the server; the error was logged."
	}
	p.Fields = invalidFields(err)
	s.render(w, r, c, status, "error", http.StatusText(status), p)
}
