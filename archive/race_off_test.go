//go:build !race

package archive_test

// raceEnabled: the race detector is off; the allocation bounds hold as written.
const raceEnabled = false
