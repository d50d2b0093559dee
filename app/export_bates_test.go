package app_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
)

func ids(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i + 1)
	}
	return out
}

// withStart is request with an explicit bates_start_number.
func withStart(prefix string, start int64, n int) export.Request {
	r := request(prefix, ids(n))
	r.BatesStartNumber = int64Ptr(start)
	return r
}

// TestExportBatesNumbering: jobs on one prefix continue its numbering, across tenants;
// an explicit start that overlaps issued numbers is a conflict and reserves nothing; one
// that fits a gap is taken; prefixes are listed per tenant and for administrators.
func TestExportBatesNumbering(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d, app.ExportsConfig{})
		a := f.createExport("acme", request("CASE", ids(5)))
		assert.Equal(t, int64(1), a.BatesStart, "first use of a prefix starts at 1")
		b := f.createExport("globex", request("CASE", ids(3)))
		assert.Equal(t, int64(6), b.BatesStart, "another tenant continues the prefix")
		for _, r := range []export.Request{withStart("CASE", 7, 2), withStart("CASE", 5, 1), withStart("CASE", 1, 100)} {
			_, err := f.x.Create(f.ctx, "acme", r, actor("auditor"))
			assert.ErrorIs(t, err, export.ErrBatesConflict, "start %d", *r.BatesStartNumber)
		}
		c := f.createExport("acme", withStart("CASE", 100, 10))
		assert.Equal(t, int64(100), c.BatesStart)
		gap := f.createExport("acme", withStart("CASE", 9, 91))
		assert.Equal(t, int64(9), gap.BatesStart, "9..99 fills the gap exactly")
		next := f.createExport("acme", request("CASE", ids(2)))
		assert.Equal(t, int64(110), next.BatesStart, "continue after the highest number")
		other := f.createExport("globex", request("OTHER", ids(4)))
		assert.Equal(t, int64(1), other.BatesStart)

		all, err := f.x.BatesPrefixes(f.ctx, app.AllTenants)
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{"CASE": 111, "OTHER": 4}, lastNumbers(all))
		mine, err := f.x.BatesPrefixes(f.ctx, "acme")
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{"CASE": 111}, lastNumbers(mine), "a tenant sees the prefixes it used")
		none, err := f.x.BatesPrefixes(f.ctx, "initech")
		require.NoError(t, err)
		assert.Empty(t, none.Prefixes)
		assert.NotNil(t, none.Prefixes, "an empty list is [], not null")
	})
}

func lastNumbers(l *app.BatesPrefixList) map[string]int64 {
	out := map[string]int64{}
	for _, p := range l.Prefixes {
		out[p.Prefix] = p.LastNumber
		if p.UpdatedAt.IsZero() {
			out[p.Prefix] = -1
		}
	}
	return out
}

// TestExportCreateValidation: every problem of a configuration in one validation error;
// numbers that would not fit in bates_digits are refused too, and nothing is reserved.
func TestExportCreateValidation(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t, database.SQLite, app.ExportsConfig{Workers: 2})
	bad := export.Request{BatesPrefix: strPtr("-bad"), BatesDigits: intPtr(0), LoadFileFormat: strPtr("xml"), Workers: intPtr(64)}
	_, err := f.x.Create(f.ctx, "acme", bad, actor("auditor"))
	var v *domain.ValidationError
	require.True(t, errors.As(err, &v), "got %v", err)
	assert.ElementsMatch(t, []string{"bates_prefix", "bates_digits", "load_file_format", "email_ids", "workers"}, keys(v.Fields))

	tiny := request("TINY", ids(10))
	tiny.BatesDigits = intPtr(1)
	_, err = f.x.Create(f.ctx, "acme", tiny, actor("auditor"))
	require.True(t, errors.As(err, &v), "got %v", err)
	assert.Contains(t, v.Fields, "bates_digits")
	prefixes, err := f.x.BatesPrefixes(f.ctx, app.AllTenants)
	require.NoError(t, err)
	assert.Empty(t, prefixes.Prefixes, "a refused job reserves nothing")

	capped := request("CAP", ids(1))
	capped.Workers = intPtr(16)
	got := f.createExport("acme", capped)
	assert.Equal(t, 2, got.Config.Workers, "workers are capped by EDISCOVERY_WORKERS")

	_, err = f.x.Create(f.ctx, "../etc", request("CAP", ids(1)), actor("auditor"))
	assert.Error(t, err, "a tenant that is no safe folder name")
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestExportConcurrentCreates creates jobs on one prefix from many goroutines at once,
// in two tenants, some continuing and some asking for the same explicit start: the
// ranges never overlap, exactly one of the equal explicit starts wins, and the prefix's
// last number is the highest one reserved.
func TestExportConcurrentCreates(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d, app.ExportsConfig{})
		type result struct {
			view *app.ExportView
			err  error
		}
		results := make(chan result, 16)
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				tenant := []string{"acme", "globex"}[i%2]
				r := request("RACE", ids(1+i%4))
				if i%4 == 3 {
					r = withStart("RACE", 500, 5)
				}
				v, err := f.x.Create(f.ctx, tenant, r, actor(fmt.Sprintf("auditor-%d", i)))
				results <- result{v, err}
			})
		}
		wg.Wait()
		close(results)
		type span struct{ start, end int64 }
		var spans []span
		conflicts := 0
		for r := range results {
			if errors.Is(r.err, export.ErrBatesConflict) {
				conflicts++
				continue
			}
			require.NoError(t, r.err)
			spans = append(spans, span{r.view.BatesStart, r.view.BatesStart + int64(r.view.TotalEmails) - 1})
		}
		assert.Equal(t, 3, conflicts, "four jobs asked for 500..504; one got it")
		slices.SortFunc(spans, func(a, b span) int { return int(a.start - b.start) })
		for i := 1; i < len(spans); i++ {
			assert.Greater(t, spans[i].start, spans[i-1].end, "ranges %v and %v overlap", spans[i-1], spans[i])
		}
		all, err := f.x.BatesPrefixes(f.ctx, app.AllTenants)
		require.NoError(t, err)
		assert.Equal(t, spans[len(spans)-1].end, lastNumbers(all)["RACE"])
	})
}
