package archive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestParseDate: RFC 5322 dates with the obsolete zones of section 4.3, military letters
// as -0000, an unknown zone kept as UTC with a note, and an unusable date refused.
func TestParseDate(t *testing.T) {
	utc := func(s string) time.Time {
		d, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		in   string
		want time.Time
		note bool
	}{
		{"Fri, 21 Nov 1997 09:55:06 -0600", utc("1997-11-21T15:55:06Z"), false},
		{"Thu, 13 Feb 1969 23:32:54 -0330", utc("1969-02-14T03:02:54Z"), false},
		{"21 Nov 97 09:55:06 GMT", utc("1997-11-21T09:55:06Z"), false},
		{"Fri, 21 Nov 1997 09:55:06 UT", utc("1997-11-21T09:55:06Z"), false},
		{"Mon, 3 Jan 2005 10:00:00 EST", utc("2005-01-03T15:00:00Z"), false},
		{"Mon, 4 Jul 2005 10:00:00 EDT", utc("2005-07-04T14:00:00Z"), false},
		{"Mon, 3 Jan 2005 10:00:00 CST", utc("2005-01-03T16:00:00Z"), false},
		{"Mon, 4 Jul 2005 10:00:00 CDT", utc("2005-07-04T15:00:00Z"), false},
		{"Mon, 3 Jan 2005 10:00:00 MST", utc("2005-01-03T17:00:00Z"), false},
		{"Mon, 4 Jul 2005 10:00:00 MDT", utc("2005-07-04T16:00:00Z"), false},
		{"Mon, 3 Jan 2005 10:00:00 PST", utc("2005-01-03T18:00:00Z"), false},
		{"Mon, 4 Jul 2005 10:00:00 pdt", utc("2005-07-04T17:00:00Z"), false},
		{"Mon, 3 Jan 2005 10:00:00 Z", utc("2005-01-03T10:00:00Z"), false},
		{"Mon, 3 Jan 2005 10:00:00 A", utc("2005-01-03T10:00:00Z"), false}, // military: -0000
		{"Mon, 3 Jan 2005 10:00:00 +0100 (CET)", utc("2005-01-03T09:00:00Z"), false},
		{"Mon, 3 Jan 2005 10:00:00 -0500 (EST)", utc("2005-01-03T15:00:00Z"), false},
		{"Mon,  3 Jan 2005 10:00 +0100", utc("2005-01-03T09:00:00Z"), false},
		{"  Mon, 3 Jan 2005 10:00:00\r\n +0100", utc("2005-01-03T09:00:00Z"), false},
		{"Mon, 3 Jan 2005 10:00:00 CEST", utc("2005-01-03T10:00:00Z"), true}, // unknown zone: UTC, noted
		{"Mon, 3 Jan 2005 10:00:00", utc("2005-01-03T10:00:00Z"), true},      // no zone: UTC, noted
	} {
		got, note, ok := parseDate(c.in)
		if assert.True(t, ok, "%q", c.in) {
			assert.Equal(t, c.want, got, "%q: got %s; want %s", c.in, got, c.want)
			assert.Equal(t, c.note, note != "", "%q: note %q", c.in, note)
			assert.Equal(t, time.UTC, got.Location())
		}
	}
	for _, bad := range []string{"", "yesterday", "Mon, 32 Jan 2005 10:00:00 +0000", "3 Foo 2005 10:00:00 +0000", "Mon, 3 Jan 2005 25:00:00 +0000"} {
		_, _, ok := parseDate(bad)
		assert.False(t, ok, "%q is no date", bad)
	}
}

// TestParseReadsObsoleteDates: the parser takes the Date header by parseDate's rules and
// keeps its note.
func TestParseReadsObsoleteDates(t *testing.T) {
	p := NewParser("")
	for _, c := range []struct {
		date, want string
		note       bool
		sent       bool
	}{
		{"Mon, 3 Jan 2005 10:00:00 EST", "2005-01-03T15:00:00Z", false, true},
		{"Mon, 3 Jan 2005 10:00:00 CEST", "2005-01-03T10:00:00Z", true, true},
		{"not a date at all", "", true, false},
	} {
		raw := []byte("From: a@example.com\r\nTo: b@example.com\r\nSubject: s\r\nDate: " + c.date + "\r\n\r\nbody\r\n")
		m, err := p.Parse(raw)
		if !assert.NoError(t, err) {
			continue
		}
		assert.Equal(t, c.sent, !m.Sent.IsZero(), "%q", c.date)
		if c.sent {
			assert.Equal(t, c.want, m.Sent.Format(time.RFC3339), "%q", c.date)
		}
		assert.Equal(t, c.note, m.DateNote != "", "%q: note %q", c.date, m.DateNote)
	}
}
