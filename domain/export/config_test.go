package export

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/domain"
)

func ptr[T any](v T) *T { return &v }

// minimal is the smallest valid request: a prefix and one email id.
func minimal() Request {
	return Request{BatesPrefix: ptr("ACME"), EmailIDs: []int64{7}}
}

// fields returns the fields of a *domain.ValidationError, failing when err is another error.
func fields(t *testing.T, err error) map[string]string {
	t.Helper()
	var v *domain.ValidationError
	require.True(t, errors.As(err, &v), "got %v; want a *domain.ValidationError", err)
	assert.ErrorIs(t, err, domain.ErrValidation)
	return v.Fields
}

// Rule 1: absent fields take their defaults.
func TestNormalizeDefaults(t *testing.T) {
	c, err := minimal().Normalize(0)
	require.NoError(t, err)
	assert.Equal(t, Config{
		BatesPrefix: "ACME", BatesStartNumber: 0, BatesDigits: 6, IncludeNatives: true,
		LoadFileFormat: FormatCSV, DateFormat: DateISO8601, DatDelimiters: DelimitersSpec,
		EmailIDs: []int64{7}, Workers: 4,
	}, c)
}

// Rule 1: present fields are kept, false and zero included.
func TestNormalizeKeepsGivenValues(t *testing.T) {
	r := Request{
		BatesPrefix: ptr("a-1_Z"), BatesStartNumber: ptr(int64(500)), BatesDigits: ptr(8),
		IncludeNatives: ptr(false), IncludeText: ptr(true), IncludeAttachments: ptr(true), OrganizeByCustodian: ptr(true),
		LoadFileFormat: ptr(FormatBoth), DateFormat: ptr(DateEU), DatDelimiters: ptr(DelimitersConcordance),
		EmailIDs: []int64{3, 1, 2}, Workers: ptr(2),
	}
	c, err := r.Normalize(4)
	require.NoError(t, err)
	assert.Equal(t, Config{
		BatesPrefix: "a-1_Z", BatesStartNumber: 500, BatesDigits: 8, IncludeNatives: false, IncludeText: true,
		IncludeAttachments: true, OrganizeByCustodian: true, LoadFileFormat: FormatBoth, DateFormat: DateEU,
		DatDelimiters: DelimitersConcordance, EmailIDs: []int64{3, 1, 2}, Workers: 2,
	}, c, "email_ids keep their order")
}

// Rule 1: the Bates prefix rule.
func TestNormalizePrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		ok     bool
	}{
		{"A", true}, {"9", true}, {"ACME_2026-X", true}, {strings.Repeat("P", 32), true},
		{"", false}, {"_ACME", false}, {"-ACME", false}, {strings.Repeat("P", 33), false},
		{"AC ME", false}, {"AC/ME", false}, {"..", false}, {"ACME.", false}, {"ÄCME", false}, {"A\x00", false},
	} {
		r := minimal()
		r.BatesPrefix = ptr(tc.prefix)
		_, err := r.Normalize(0)
		if tc.ok {
			assert.NoError(t, err, "prefix %q", tc.prefix)
			continue
		}
		assert.Contains(t, fields(t, err), "bates_prefix", "prefix %q", tc.prefix)
	}
	r := minimal()
	r.BatesPrefix = nil
	_, err := r.Normalize(0)
	assert.Contains(t, fields(t, err), "bates_prefix", "a missing prefix")
}

// Rule 1: every field's rule, each problem reported at once in one error.
func TestNormalizeReportsEveryProblem(t *testing.T) {
	r := Request{
		BatesStartNumber: ptr(int64(-1)), BatesDigits: ptr(11), LoadFileFormat: ptr("xml"),
		DateFormat: ptr("rfc2822"), DatDelimiters: ptr("pipes"), Workers: ptr(33),
	}
	_, err := r.Normalize(4)
	got := fields(t, err)
	for _, f := range []string{"bates_prefix", "bates_start_number", "bates_digits", "load_file_format", "date_format", "dat_delimiters", "email_ids", "workers"} {
		assert.Contains(t, got, f)
	}
	assert.Len(t, got, 8, "got %v", got)
}

func TestNormalizeRanges(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(r *Request)
		field string // "" when valid
	}{
		{"digits 1", func(r *Request) { r.BatesDigits = ptr(1) }, ""},
		{"digits 10", func(r *Request) { r.BatesDigits = ptr(10) }, ""},
		{"digits 0", func(r *Request) { r.BatesDigits = ptr(0) }, "bates_digits"},
		{"digits 11", func(r *Request) { r.BatesDigits = ptr(11) }, "bates_digits"},
		{"start 0", func(r *Request) { r.BatesStartNumber = ptr(int64(0)) }, ""},
		{"start 1", func(r *Request) { r.BatesStartNumber = ptr(int64(1)) }, ""},
		{"start -5", func(r *Request) { r.BatesStartNumber = ptr(int64(-5)) }, "bates_start_number"},
		{"workers 1", func(r *Request) { r.Workers = ptr(1) }, ""},
		{"workers 32", func(r *Request) { r.Workers = ptr(32) }, ""},
		{"workers 0", func(r *Request) { r.Workers = ptr(0) }, "workers"},
		{"workers 33", func(r *Request) { r.Workers = ptr(33) }, "workers"},
		{"format csv", func(r *Request) { r.LoadFileFormat = ptr("csv") }, ""},
		{"format dat", func(r *Request) { r.LoadFileFormat = ptr("dat") }, ""},
		{"format CSV", func(r *Request) { r.LoadFileFormat = ptr("CSV") }, "load_file_format"},
		{"date us", func(r *Request) { r.DateFormat = ptr("us") }, ""},
		{"date iso", func(r *Request) { r.DateFormat = ptr("iso") }, "date_format"},
		{"delimiters spec", func(r *Request) { r.DatDelimiters = ptr("spec") }, ""},
		{"ids empty", func(r *Request) { r.EmailIDs = []int64{} }, "email_ids"},
		{"ids zero", func(r *Request) { r.EmailIDs = []int64{1, 0} }, "email_ids"},
		{"ids negative", func(r *Request) { r.EmailIDs = []int64{-3} }, "email_ids"},
		{"ids beyond 2^53-1", func(r *Request) { r.EmailIDs = []int64{1, MaxEmailID + 1} }, "email_ids"},
		{"ids at the limit", func(r *Request) { r.EmailIDs = sequence(MaxEmails) }, ""},
		{"ids over the limit", func(r *Request) { r.EmailIDs = sequence(MaxEmails + 1) }, "email_ids"},
	} {
		r := minimal()
		tc.edit(&r)
		_, err := r.Normalize(0)
		if tc.field == "" {
			assert.NoError(t, err, tc.name)
			continue
		}
		got := fields(t, err)
		assert.Contains(t, got, tc.field, tc.name)
		assert.Len(t, got, 1, "%s: got %v", tc.name, got)
	}
}

func sequence(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i + 1)
	}
	return out
}

// Rule 1: workers above EDISCOVERY_WORKERS are lowered to it; a cap of 0 means none.
func TestNormalizeWorkerCap(t *testing.T) {
	for _, tc := range []struct{ asked, limit, want int }{
		{32, 4, 4}, {3, 4, 3}, {4, 4, 4}, {16, 0, 16}, {8, 32, 8},
	} {
		r := minimal()
		r.Workers = ptr(tc.asked)
		c, err := r.Normalize(tc.limit)
		require.NoError(t, err)
		assert.Equal(t, tc.want, c.Workers, "workers %d under cap %d", tc.asked, tc.limit)
	}
	c, err := minimal().Normalize(2)
	require.NoError(t, err)
	assert.Equal(t, 2, c.Workers, "the default 4 is capped too")
}

// Rule 1: duplicate ids are exported once, in the order of their first appearance.
func TestNormalizeDeduplicatesIDs(t *testing.T) {
	r := minimal()
	r.EmailIDs = []int64{5, 3, 5, 9, 3, 1}
	c, err := r.Normalize(0)
	require.NoError(t, err)
	assert.Equal(t, []int64{5, 3, 9, 1}, c.EmailIDs)
}

func TestBatesPrefixProblemIsExplained(t *testing.T) {
	for prefix, want := range map[string]string{
		"":                      "is empty",
		strings.Repeat("A", 33): "is 33 characters long; at most 32",
		"_ABC":                  `starts with '_'; the first character must be a letter`,
		"-ABC":                  `starts with '-'`,
		"AB C":                  `character ' ' at position 3 is not allowed`,
		"ABCé":                  `character 'é' at position 4 is not allowed`,
		"AB/../C":               `character '/' at position 3`,
	} {
		_, err := Request{BatesPrefix: &prefix, EmailIDs: []int64{1}}.Normalize(0)
		var v *domain.ValidationError
		require.True(t, errors.As(err, &v), "prefix %q: got %v", prefix, err)
		assert.Contains(t, v.Fields["bates_prefix"], want, "prefix %q", prefix)
	}
}

// TestCheckPrefix: CheckPrefix applies rule 1's prefix rule alone, with Normalize's text.
func TestCheckPrefix(t *testing.T) {
	assert.NoError(t, CheckPrefix("ACME_2026-a"))
	for _, p := range []string{"", "-A", "A B", strings.Repeat("A", 33)} {
		err := CheckPrefix(p)
		var ve *domain.ValidationError
		require.True(t, errors.As(err, &ve), "got %v for %q; want a validation error", err, p)
		_, nerr := Request{BatesPrefix: ptr(p), EmailIDs: []int64{1}}.Normalize(0)
		assert.Equal(t, nerr.(*domain.ValidationError).Fields["bates_prefix"], ve.Fields["bates_prefix"], "prefix %q", p)
	}
}
