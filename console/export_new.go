package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
)

// The export dialog: the messages selected in the archive (?id=…) or every result of a
// search (?search=1 and the search's fields), and every option of the export
// configuration object (docs/api.md) with its default. The export request names emails,
// not a query, so a search is resolved to its ids (at most archive.MaxTotal) when the
// dialog opens; the form carries them.

// exportForm is the dialog's fields as typed.
type exportForm struct {
	EmailIDs, Prefix, Start, Digits, Workers  string
	LoadFileFormat, DateFormat, DatDelimiters string
	Natives, Text, Attachments, Custodian     bool
}

// defaultExportForm is the form with the configuration object's defaults.
func defaultExportForm() exportForm {
	return exportForm{Start: "0", Digits: strconv.Itoa(export.DefaultDigits), Workers: strconv.Itoa(export.DefaultWorkers),
		LoadFileFormat: export.FormatCSV, DateFormat: export.DateISO8601, DatDelimiters: export.DelimitersSpec, Natives: true}
}

// exportDialogPage is the dialog: the form, where the prefix continues, the tenant's
// prefixes, and the problems of a refused export.
type exportDialogPage struct {
	Form         exportForm
	Count        int
	Source       string
	Continuation *app.BatesContinuation
	PrefixIssue  string
	Prefixes     []app.BatesPrefix
	Problem      *problem
	Formats      []string
	DateFormats  []string
	Delimiters   []string
}

// exportDialog opens the dialog on the selected messages or a search's results.
func (s *Server) exportDialog(w http.ResponseWriter, r *http.Request, c *call, x *app.Exports, tenant string) {
	v := r.URL.Query()
	form := defaultExportForm()
	source := "messages selected in the archive"
	ids := v["id"]
	if v.Get("search") != "" {
		found, err := s.searchIDs(r, w, c, tenant, v)
		if err != nil {
			s.fail(w, r, c, err)
			return
		}
		ids, source = found, "every result of the search "+describeSearch(v)
	}
	form.EmailIDs = strings.Join(ids, "\n")
	s.renderDialog(w, r, c, x, tenant, http.StatusOK, form, source, nil)
}

// searchIDs runs the search of v (app.Messages.Search, recorded in the ledger as every
// search) for all its results, and returns their ids; more than archive.MaxTotal results
// are refused, since the export could not name them all.
func (s *Server) searchIDs(r *http.Request, w http.ResponseWriter, c *call, tenant string, v url.Values) ([]string, error) {
	q, err := parseSearch(v)
	if err != nil {
		return nil, err
	}
	q.Limit, q.Offset = archive.MaxTotal, 0
	reader := c.scope.ReaderIn(tenant, metadata(r, w, c))
	if reader == nil {
		return nil, nil
	}
	msgs, total, err := c.app.Messages.Search(r.Context(), *reader, q)
	if err != nil {
		return nil, err
	}
	if total > archive.MaxTotal {
		var ve domain.ValidationError
		ve.Add("search", fmt.Sprintf("has more than %d results; narrow it (dates, sender, words) and export in parts", archive.MaxTotal))
		return nil, ve.Err()
	}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = strconv.FormatInt(m.ID, 10)
	}
	return ids, nil
}

// describeSearch is the search's criteria in words.
func describeSearch(v url.Values) string {
	var parts []string
	for _, f := range []struct{ name, label string }{{"q", "words"}, {"from", "sender"}, {"to", "recipient"},
		{"date_from", "from"}, {"date_to", "to"}, {"tag", "tag"}} {
		if val := strings.TrimSpace(v.Get(f.name)); val != "" {
			parts = append(parts, fmt.Sprintf("%s %q", f.label, val))
		}
	}
	if v.Get("attachments") == "1" {
		parts = append(parts, "with attachments only")
	}
	if len(parts) == 0 {
		return "(every message)"
	}
	return strings.Join(parts, ", ")
}

// createExport creates the export the dialog describes (app.Exports.Create validates it,
// as for the API) and shows it; a refused one shows the dialog again with the reasons,
// and nothing is created. The button "Show next number" (action=preview) only shows where
// the typed prefix continues.
func (s *Server) createExport(w http.ResponseWriter, r *http.Request, c *call, x *app.Exports, tenant string) {
	form := readExportForm(r)
	if r.PostFormValue("action") == "preview" {
		s.renderDialog(w, r, c, x, tenant, http.StatusOK, form, "", nil)
		return
	}
	req, err := form.request()
	if err == nil {
		var v *app.ExportView
		if v, err = x.Create(r.Context(), tenant, req, metadata(r, w, c)); err == nil {
			http.Redirect(w, r, exportsPath+"/"+url.PathEscape(v.JobID), http.StatusSeeOther)
			return
		}
	}
	switch {
	case invalidFields(err) != nil:
		p := &problem{Message: "The export was not created.", Fields: invalidFields(err)}
		s.renderDialog(w, r, c, x, tenant, http.StatusBadRequest, form, "", p)
	case errors.Is(err, export.ErrBatesConflict):
		p := &problem{Message: "The export was not created: its Bates numbers overlap numbers already issued for this prefix. Leave the start number at 0 to continue after them."}
		s.renderDialog(w, r, c, x, tenant, http.StatusConflict, form, "", p)
	default:
		s.fail(w, r, c, err)
	}
}

// readExportForm reads the dialog's fields; a checkbox not sent is unticked.
func readExportForm(r *http.Request) exportForm {
	f := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	return exportForm{EmailIDs: f("email_ids"), Prefix: f("bates_prefix"), Start: f("bates_start_number"),
		Digits: f("bates_digits"), Workers: f("workers"), LoadFileFormat: f("load_file_format"),
		DateFormat: f("date_format"), DatDelimiters: f("dat_delimiters"),
		Natives: f("include_natives") != "", Text: f("include_text") != "",
		Attachments: f("include_attachments") != "", Custodian: f("organize_by_custodian") != ""}
}

// request is the form as the API's request: an empty text field takes its default, an
// unticked box is false. A number that is not one
// is a problem of its field, reported with every problem export.Request.Normalize finds
// in the rest, and nothing is created.
func (f exportForm) request() (export.Request, error) {
	var ve domain.ValidationError
	number := func(field, s string) *int64 {
		if s == "" {
			return nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			ve.Add(field, fmt.Sprintf("%q is not a whole number", s))
			return nil
		}
		return &n
	}
	small := func(field, s string) *int {
		if n := number(field, s); n != nil {
			v := int(max(min(*n, 1<<31-1), -1<<31))
			return &v
		}
		return nil
	}
	req := export.Request{BatesPrefix: &f.Prefix, BatesStartNumber: number("bates_start_number", f.Start),
		BatesDigits: small("bates_digits", f.Digits), Workers: small("workers", f.Workers),
		IncludeNatives: &f.Natives, IncludeText: &f.Text, IncludeAttachments: &f.Attachments,
		OrganizeByCustodian: &f.Custodian, LoadFileFormat: given(f.LoadFileFormat), DateFormat: given(f.DateFormat),
		DatDelimiters: given(f.DatDelimiters)}
	for _, s := range strings.FieldsFunc(f.EmailIDs, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' }) {
		if id := number("email_ids", s); id != nil {
			req.EmailIDs = append(req.EmailIDs, *id)
		}
	}
	if len(ve.Fields) == 0 {
		return req, nil
	}
	if _, err := req.Normalize(0); err != nil {
		for field, why := range invalidFields(err) {
			ve.Add(field, why)
		}
	}
	return req, ve.Err()
}

// given is s, or nil (the default) when it is empty.
func given(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// renderDialog shows the dialog with where its prefix continues and the tenant's
// prefixes.
func (s *Server) renderDialog(w http.ResponseWriter, r *http.Request, c *call, x *app.Exports, tenant string, status int, form exportForm, source string, p *problem) {
	page := exportDialogPage{Form: form, Source: source, Problem: p,
		Formats:     []string{export.FormatCSV, export.FormatDAT, export.FormatBoth},
		DateFormats: []string{export.DateISO8601, export.DateUS, export.DateEU},
		Delimiters:  []string{export.DelimitersSpec, export.DelimitersConcordance}}
	page.Count = len(strings.Fields(strings.ReplaceAll(form.EmailIDs, ",", " ")))
	prefixes, err := x.BatesPrefixes(r.Context(), tenant)
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	page.Prefixes = prefixes.Prefixes
	if form.Prefix != "" {
		page.Continuation, err = x.NextBates(r.Context(), tenant, form.Prefix)
		if fields := invalidFields(err); fields != nil {
			page.PrefixIssue, err = fields["bates_prefix"], nil
		}
		if err != nil {
			s.fail(w, r, c, err)
			return
		}
	}
	s.render(w, r, c, status, "export_new", "New eDiscovery export", page)
}
