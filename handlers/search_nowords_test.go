package handlers_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestMessageSearchWithoutWordsOverHTTP: a q with no searchable word sets no text condition
// (200 with every message the other filters let through), never a 500.
func TestMessageSearchWithoutWordsOverHTTP(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		newMailbox(f)
		all := []string{"contract draft", "budget review", "merger rumours", "holiday party", "quarterly budget"}
		for _, q := range []string{".", "-", "@", `"`, "*", "\x00", "^", "()", ":", "+", "_", "@._-", " "} {
			l := f.list(auditorUser, url.Values{"q": {q}})
			assert.Equal(t, all, subjects(l), "q=%q", q)
			assert.Equal(t, len(all), l.Total, "q=%q", q)
			l = f.list(auditorUser, url.Values{"q": {q}, "from": {"@other.test"}})
			assert.Equal(t, []string{"holiday party"}, subjects(l), "q=%q with from", q)
		}
	})
}
