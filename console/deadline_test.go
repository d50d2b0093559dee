package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
)

// TestDeadlines: the list shows each request's due date, sorts by it and flags the
// overdue ones (by the fixture's clock) in words; an auditor extends a deadline in the
// request page's form (the use case of the API's POST …/extend), refusals are shown next
// to the form, and the extension is in the history replayed from the ledger.
func TestDeadlines(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		ctx, md := context.Background(), domain.Metadata{Actor: "setup"}
		first, err := f.app.Erasure.Create(ctx, tenant, app.CreateRequestInput{EmailAddresses: []string{"first@example.test"}}, md)
		require.NoError(t, err)
		second, err := f.app.Erasure.Create(ctx, tenant, app.CreateRequestInput{EmailAddresses: []string{"second@example.test"}}, md)
		require.NoError(t, err)
		f.drain()
		due := first.CreatedAt.Add(erasure.DefaultDeadline).UTC().Format(time.DateOnly)
		b := f.login(auditorUser)
		path := "/compliance/gdpr/" + first.RequestID

		_, page := b.get("/compliance/gdpr")
		assert.Contains(t, page, "<th scope=\"col\">Due</th>")
		assert.Contains(t, page, due)
		assert.NotContains(t, page, `class="flag">Overdue`)
		resp, page := b.get(path)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, "Extend the deadline")
		assert.Contains(t, page, `max="`+first.CreatedAt.Add(erasure.MaxDeadline).UTC().Format(time.DateOnly)+`"`)

		for name, tc := range map[string]struct{ dueAt, reason, want string }{
			"no reason":         {first.CreatedAt.AddDate(0, 0, 60).Format(time.DateOnly), " ", "Reason: is required"},
			"past three months": {first.CreatedAt.AddDate(0, 0, 95).Format(time.DateOnly), "long", "at most 90 days"},
			"not a date":        {"soon", "x", "must be a date"},
		} {
			resp, page := b.submit(path+"/extend", url.Values{"due_at": {tc.dueAt}, "reason": {tc.reason}})
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, name)
			assert.Contains(t, page, tc.want, name)
			assert.Contains(t, page, "The deadline was not extended.", name)
			assert.Contains(t, page, "erasure.request_created", "%s: the page around the form is whole", name)
		}
		until := first.CreatedAt.AddDate(0, 0, 80).UTC().Format(time.DateOnly)
		resp, _ = b.submit(path+"/extend", url.Values{"due_at": {until}, "reason": {"two backups to search"}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, 1, f.countEvents(erasure.EventDeadlineExtended))
		v, err := f.app.Erasure.Get(ctx, tenant, first.RequestID)
		require.NoError(t, err)
		assert.Equal(t, until, v.DueAt.UTC().Format(time.DateOnly))
		_, page = b.get(path)
		assert.Contains(t, page, until+" 23:59:59 UTC")
		assert.Regexp(t, `<td>erasure\.deadline_extended</td><td>`+auditorUser+`</td>`, page, "the extension in the history")

		_, page = b.get("/compliance/gdpr?sort=due")
		assert.Less(t, strings.Index(page, second.RequestID), strings.Index(page, first.RequestID), "the earliest due date first")
		_, page = b.get("/compliance/gdpr")
		assert.Less(t, strings.Index(page, second.RequestID), strings.Index(page, first.RequestID), "newest first")
		resp, _ = b.get("/compliance/gdpr?sort=priority")
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

		// a month and a day after the creation: the second is overdue, the first was extended
		f.clock.advance(second.CreatedAt.AddDate(0, 0, 31).Sub(f.clock.Now()))
		b = f.login(auditorUser) // the old session went idle
		_, page = b.get("/compliance/gdpr?sort=due")
		rows := regexp.MustCompile(`(?s)<tr( class="overdue")?>\s*<td[^>]*><a href="/compliance/gdpr/(GDPR-[0-9-]+)">.*?</tr>`).FindAllStringSubmatch(page, -1)
		require.Len(t, rows, 2, page)
		assert.Equal(t, second.RequestID, rows[0][2])
		assert.Contains(t, rows[0][0], "Overdue", "flagged in words, not colour only")
		assert.NotContains(t, rows[1][0], "Overdue")
		_, page = b.get("/compliance/gdpr/" + second.RequestID)
		assert.Regexp(t, `<dd id="due">[^<]*<strong class="flag">Overdue</strong>`, page)
		_, page = b.get("/compliance/gdpr?overdue=1")
		assert.Contains(t, page, second.RequestID, "overdue only")
		assert.NotContains(t, page, first.RequestID, "overdue only: the extended one is not")
		assert.Contains(t, page, `name="overdue" type="checkbox" value="1" checked`)
	})
}
