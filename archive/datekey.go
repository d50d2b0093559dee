package archive

import (
	"math"
	"time"
)

// The date key orders messages as every search page does: newest first by the message's
// date (the Date header, else the arrival) to the second, then by id. It is one integer so
// that an index of it gives pages in order: metadata_tenant_datekey_visible on every database, and
// on SQLite address_role's walks by address and by domain. (SQLite's FTS5 index stays
// keyed by id: keyed by date its posting lists grew too large; docs/performance.md, "The
// date key in FTS5".)
//
// DateKey = seconds since 1900-01-01 UTC (clamped to 0..2^33-1, years 1900 to 2172) << 30
// | the low 30 bits of the id. Two messages share a key only when they are dated in the same
// second and their ids differ by a multiple of 2^30 (an archive of over a billion
// messages); SQLite then refuses the second's index row and its commit fails, loudly.
// The migrations that added the column compute the same value in SQL.
const (
	dateKeyIDBits   = 30
	dateKeyIDMask   = 1<<dateKeyIDBits - 1
	dateKeyMaxSec   = 1<<33 - 1
	dateKeyEpochSec = -2208988800 // 1900-01-01T00:00:00Z
)

// DateKey is the date key of a message dated date with id id.
func DateKey(date time.Time, id int64) int64 {
	return dateKeySeconds(date)<<dateKeyIDBits | id&dateKeyIDMask
}

// dateKeySeconds is date's seconds field of a date key.
func dateKeySeconds(date time.Time) int64 {
	return min(max(date.Unix()-dateKeyEpochSec, 0), dateKeyMaxSec)
}

// dateKeyBounds are date-key bounds around the messages dated in [from, to) (a zero time
// is no bound): key >= lo when hasLo, key < hi when hasHi. They may take in messages of
// the bounds' own seconds outside the interval (a key holds whole seconds, msgdate
// microseconds), so they narrow an index range and the msgdate conditions stay.
func dateKeyBounds(from, to time.Time) (lo, hi int64, hasLo, hasHi bool) {
	if !from.IsZero() {
		lo, hasLo = dateKeySeconds(from)<<dateKeyIDBits, true
	}
	if s := dateKeySeconds(to); !to.IsZero() && s < dateKeyMaxSec {
		hi, hasHi = (s+1)<<dateKeyIDBits, true
	}
	return lo, hi, hasLo, hasHi
}

// exactDateKeyBounds are the date keys lo to hi, both included, of exactly the messages
// dated in [from, to) (a zero time is no bound), where that holds: each bound a whole
// second inside the range a key holds (then a message is dated from `from` on exactly
// when its key's seconds are, and before `to` exactly when its key's seconds are before
// to's). exact is false otherwise, and the msgdate conditions must decide.
func exactDateKeyBounds(from, to time.Time) (lo, hi int64, exact bool) {
	inside := func(t time.Time) bool {
		s := t.Unix() - dateKeyEpochSec
		return t.Nanosecond() == 0 && s > 0 && s < dateKeyMaxSec
	}
	if (!from.IsZero() && !inside(from)) || (!to.IsZero() && !inside(to)) {
		return 0, 0, false
	}
	lo, hi = 0, math.MaxInt64
	if !from.IsZero() {
		lo = dateKeySeconds(from) << dateKeyIDBits
	}
	if !to.IsZero() {
		hi = dateKeySeconds(to)<<dateKeyIDBits - 1
	}
	return lo, hi, true
}
