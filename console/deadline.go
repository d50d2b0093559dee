package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
)

// Deadlines of GDPR requests: each is due 30 days after its creation; whoever may act on
// it (global administrators, auditors) may extend that up to 90 days after its creation,
// with a reason, through app.Erasure.ExtendDeadline, the use case of the API's
// POST …/extend, recorded as the event erasure.deadline_extended.

// extendForm is the deadline form of the request page.
type extendForm struct {
	Open    bool   // the request is open: its deadline may move
	DueAt   string // the date typed (YYYY-MM-DD)
	Reason  string
	Min     string // the first date the form takes: the day after the current due date
	Max     string // the last: 90 days after the creation
	Problem *problem
}

// newExtendForm is the form of request v, keeping what ext holds (after a refusal).
func newExtendForm(v *app.RequestView, ext extendForm) extendForm {
	ext.Open = v.Status != erasure.StatusCompleted && v.Status != erasure.StatusRejected
	ext.Min = v.DueAt.UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	ext.Max = v.CreatedAt.Add(erasure.MaxDeadline).UTC().Format(time.DateOnly)
	if ext.Max < ext.Min {
		ext.Min = ext.Max
	}
	return ext
}

// extendDeadline moves the request's due date to the end (UTC) of the day of the form
// field due_at, for reason; a refusal shows the request page again with the problem next
// to the form.
func (s *Server) extendDeadline(w http.ResponseWriter, r *http.Request, c *call, tenant string) {
	id := mux.Vars(r)["request_id"]
	ext := extendForm{DueAt: strings.TrimSpace(r.PostFormValue("due_at")), Reason: r.PostFormValue("reason")}
	until, err := endOfDay(ext.DueAt)
	if err == nil {
		_, err = c.app.Erasure.ExtendDeadline(r.Context(), tenant, id, until, ext.Reason, metadata(r, w, c))
	}
	if fields := invalidFields(err); fields != nil {
		ext.Problem = &problem{Message: "The deadline was not extended.", Fields: fields}
		s.renderRequest(w, r, c, tenant, http.StatusBadRequest, ext)
		return
	}
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, gdprPath+"/"+url.PathEscape(id)+"#deadline", http.StatusSeeOther)
}

// endOfDay reads a YYYY-MM-DD date as the last microsecond of that day (UTC), as the API
// reads a date.
func endOfDay(s string) (time.Time, error) {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		var ve domain.ValidationError
		ve.Add("due_at", "must be a date, YYYY-MM-DD")
		return time.Time{}, ve.Err()
	}
	return d.Add(24*time.Hour - time.Microsecond), nil
}
