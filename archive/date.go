package archive

import (
	"net/mail"
	"strings"
	"time"

	"github.com/mailledger/mailledger/database"
)

// Dates of the Date header (docs/api.md, "parse_note"):
//  1. RFC 5322 dates, with the obsolete syntax of its section 4.3: two-digit years, the
//     zone names UT, GMT, EST/EDT, CST/CDT, MST/MDT, PST/PDT with their offsets, and the
//     military one-letter zones read as -0000 ("no zone information"), as the RFC says.
//  2. Comments and folding anywhere are left out; the day of the week is optional.
//  3. A date with an unknown zone name (CEST, IST, …) or no zone keeps its date and time,
//     read as UTC, with a note: a wrong offset beats a lost date.
//  4. A date that is unusable even so is refused: the message's date is then its arrival.

// obsoleteZones are the zone names of RFC 5322 section 4.3 and their offsets.
var obsoleteZones = map[string]string{
	"UT": "+0000", "GMT": "+0000", "EST": "-0500", "EDT": "-0400", "CST": "-0600",
	"CDT": "-0500", "MST": "-0700", "MDT": "-0600", "PST": "-0800", "PDT": "-0700",
}

// parseDate reads a Date header's value: the time in UTC, a note when the zone was
// unknown or missing (rule 3), and false when no date can be read (rule 4).
func parseDate(s string) (time.Time, string, bool) {
	fields := strings.Fields(withoutComments(s))
	if len(fields) < 3 {
		return time.Time{}, "", false
	}
	note := ""
	last := fields[len(fields)-1]
	switch zone := strings.ToUpper(last); {
	case last[0] == '+' || last[0] == '-':
		// a numeric zone: mail.ParseDate reads it
	case obsoleteZones[zone] != "":
		fields[len(fields)-1] = obsoleteZones[zone]
	case len(zone) == 1 && zone[0] >= 'A' && zone[0] <= 'Z' && zone != "J":
		fields[len(fields)-1] = "-0000"
	case isLetters(zone):
		note = "Date header: unknown zone " + database.Clip(last, 16) + ", read as UTC"
		fields[len(fields)-1] = "+0000"
	default:
		note = "Date header: no zone, read as UTC"
		fields = append(fields, "+0000")
	}
	d, err := mail.ParseDate(strings.Join(fields, " "))
	if err != nil {
		return time.Time{}, "", false
	}
	return d.UTC(), note, true
}

// withoutComments is s without its comments (nested, with quoted-pairs), each replaced by
// a space; an unclosed comment runs to the end. Linear in s.
func withoutComments(s string) string {
	if !strings.Contains(s, "(") {
		return s
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case depth > 0 && c == '\\':
			i++
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			if depth--; depth == 0 {
				b.WriteByte(' ')
			}
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'A' || c > 'Z' {
			return false
		}
	}
	return s != ""
}
